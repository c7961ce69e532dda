package room

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/runs"
)

// worktreeHarness is a room whose executor runs in a worktree of its
// own: it edits main.go, creates pkg/new.txt and deletes old.txt, in the
// folder it is given.
func worktreeHarness(t *testing.T, answers ...string) *harness {
	t.Helper()
	h := newHarnessIn(t, false, answers...)
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			os.WriteFile(filepath.Join(r.Dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
			os.MkdirAll(filepath.Join(r.Dir, "pkg"), 0o755)
			os.WriteFile(filepath.Join(r.Dir, "pkg", "new.txt"), []byte("one\ntwo\n"), 0o644)
			os.Remove(filepath.Join(r.Dir, "old.txt"))
		}
		return agents.Result{ExitCode: 0, FinalText: "done"}
	}
	writePlan(t, h, "## Goal\nshout\n")
	return h
}

func worktreeCount(t *testing.T, dir string) int {
	out, err := exec.Command("git", "-C", dir, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "worktree ")
}

func TestExecuteRunsInAWorktreeAndApplyBringsItIn(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	ctx := context.Background()
	os.WriteFile(filepath.Join(h.dir, "mine.txt"), []byte("my untracked file\n"), 0o644)
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	r := h.e.wt.Pending()
	if r == nil {
		t.Fatalf("no pending run:\n%s", h.out.String())
	}
	ran := h.fr.ran[len(h.fr.ran)-1]
	if ran.Dir != r.Worktree || strings.HasPrefix(r.Worktree, h.dir) {
		t.Fatalf("the executor ran in %s, the run's worktree is %s", ran.Dir, r.Worktree)
	}
	out := h.out.String()
	for _, want := range []string{"worktree: " + r.Worktree + " (made on yes", "changed 3 files: +4 -1", "pkg/new.txt  +2 (new file)", "not applied: your files are as they were", "/apply brings them into your tree"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if read(t, r.Worktree, "mine.txt") != "my untracked file\n" {
		t.Error("the worktree lacks the user's untracked file")
	}
	// Nothing reached the user's tree yet.
	if read(t, h.dir, "main.go") != "package main\n" || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatal("the run's change is in the user's tree before /apply")
	}
	if got := h.e.wt.PendingLine(); got != "3 files changed, not applied" {
		t.Fatalf("pending line %q", got)
	}
	// The run's summary counts the run's change, not the user's untracked
	// file the worktree started with.
	for _, ev := range h.events(t) {
		if m, err := events.MetaOf[events.ExecuteMeta](&ev); err == nil && ev.Kind == events.KindExecute {
			if m.ChangedFiles == nil || *m.ChangedFiles != 3 || !strings.Contains(ev.Text, "3 changed files") {
				t.Fatalf("execute summary %q %+v", ev.Text, m)
			}
		}
	}
	if p := h.e.Panel(ctx); p.Pending != "3 files changed, not applied" {
		t.Fatalf("panel %+v", p)
	}
	if s := h.e.Status(ctx); s.PendingRun == nil || s.PendingRun.Files != 3 || !strings.Contains(s.Text(), "pending run: 3 files changed (+4 -1), not applied") {
		t.Fatalf("status %+v\n%s", s.PendingRun, s.Text())
	}
	h.out.Reset()
	h.e.Process(ctx, "/diff")
	if out := h.out.String(); !strings.Contains(out, "+func shout() {}") || strings.Contains(out, "my untracked file") {
		t.Fatalf("/diff:\n%s", out)
	}
	h.out.Reset()
	h.e.Process(ctx, "/runs")
	if out := h.out.String(); !strings.Contains(out, "* "+r.ID) || !strings.Contains(out, "pending, 3 files changed +4 -1, not applied") {
		t.Fatalf("/runs:\n%s", out)
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	out = h.out.String()
	for _, want := range []string{"/apply brings the change of codex /execute", "main.go      write   (+2 -0, 1 hunk)", "old.txt      kept    (the run deleted it", "pkg/new.txt  create  (+2, new file)", "applied 2 files"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" || read(t, h.dir, "pkg/new.txt") != "one\ntwo\n" || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatal("/apply did not bring the change (or deleted a file that existed before)")
	}
	if worktreeCount(t, h.dir) != 1 || h.e.wt.Pending() != nil || h.e.wt.PendingLine() != "" {
		t.Fatal("the applied run's worktree is left, or still pending")
	}
	var applied *events.ChangesMeta
	for _, ev := range h.events(t) {
		if m, err := events.MetaOf[events.ChangesMeta](&ev); err == nil && ev.Kind == events.KindChanges && m.Apply {
			applied = &m
		}
	}
	if applied == nil || applied.Run != r.ID || applied.Worktree != r.Worktree {
		t.Fatalf("no apply event: %+v", applied)
	}
	// /undo takes exactly that out.
	h.out.Reset()
	h.term.answers = append(h.term.answers, "y")
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	if read(t, h.dir, "main.go") != "package main\n" || !strings.Contains(read(t, h.dir, "pkg/new.txt"), "no such file") || read(t, h.dir, "mine.txt") != "my untracked file\n" {
		t.Fatalf("after /undo:\n%s", h.out.String())
	}
}

func TestUndoBeforeApplyDiscardsTheRun(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	r := h.e.wt.Pending()
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "/undo discards codex /execute") || !strings.Contains(out, "your files are not touched") {
		t.Fatalf("/undo:\n%s", out)
	}
	if _, err := os.Stat(r.Worktree); err == nil || worktreeCount(t, h.dir) != 1 {
		t.Fatal("the discarded run's worktree is left")
	}
	if read(t, h.dir, "main.go") != "package main\n" || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatal("discard touched the user's tree")
	}
	if list, _ := runs.List(h.dir); len(list) != 0 {
		t.Fatalf("runs left: %v", list)
	}
}

func TestADeclinedExecuteLeavesNoWorktree(t *testing.T) {
	h := worktreeHarness(t, "n")
	if _, err := h.e.Process(context.Background(), "/execute"); err != nil && !strings.Contains(err.Error(), "cancelled") {
		t.Fatal(err)
	}
	if len(h.fr.ran) != 0 || worktreeCount(t, h.dir) != 1 || h.e.wt.Run() != nil {
		t.Fatal("a declined run left a worktree")
	}
	d, _ := runs.RepoDir(h.dir)
	if names, _ := os.ReadDir(d); len(names) != 0 {
		t.Fatalf("left in the runs folder: %v", names)
	}
}

// A conflict is shown path by path and nothing is applied; the run stays
// pending.
func TestApplyConflictAppliesNothing(t *testing.T) {
	h := worktreeHarness(t, "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main\n\nfunc mine() {}\n"), 0o644)
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if !strings.Contains(out, "main.go      CONFLICT: you changed it during the run") || !strings.Contains(out, "/apply refused, 1 conflict: nothing was applied") {
		t.Fatalf("/apply:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "pkg", "new.txt")); err == nil || read(t, h.dir, "main.go") != "package main\n\nfunc mine() {}\n" {
		t.Fatal("a conflicted apply wrote something")
	}
	if h.e.wt.Pending() == nil {
		t.Fatal("the run is no longer pending")
	}
	if !strings.Contains(out, "1 hunk overlaps the run's") {
		t.Fatalf("/apply's conflict line:\n%s", out)
	}
	// The advice works: the file in the run's worktree made to read as
	// the user's applies as "same", and the rest comes in.
	if !strings.Contains(out, "edit that file in the run's worktree") {
		t.Fatalf("/apply's advice:\n%s", out)
	}
	r := h.e.wt.Pending()
	os.WriteFile(filepath.Join(r.Worktree, "main.go"), []byte("package main\n\nfunc mine() {}\n"), 0o644)
	h.out.Reset()
	h.term.answers = append(h.term.answers, "y")
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "main.go      same") || !strings.Contains(out, "applied 1 file") || read(t, h.dir, "pkg/new.txt") != "one\ntwo\n" {
		t.Fatalf("/apply after settling the conflict in the worktree:\n%s", out)
	}
}

// The planner of a /continue loop reads the run's worktree, and the
// step's diff is the worktree's.
func TestContinueWorksInTheRunsWorktree(t *testing.T) {
	h := newHarnessIn(t, false, "y")
	writePlan(t, h, fullPlan)
	h.fr.run = func(_ context.Context, i int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			os.WriteFile(filepath.Join(r.Dir, "step.txt"), []byte("step\n"), 0o644)
			return agents.Result{FinalText: "did a step"}
		}
		return agents.Result{FinalText: fullPlan + "\nPLAN COMPLETE"}
	}
	if _, err := h.e.Continue(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	r := h.e.wt.Pending()
	if r == nil || len(h.fr.ran) != 2 {
		t.Fatalf("runs %d, pending %v:\n%s", len(h.fr.ran), r, h.out.String())
	}
	for _, req := range h.fr.ran {
		if req.Dir != r.Worktree {
			t.Errorf("%s ran in %s, not the run's worktree", req.Role, req.Dir)
		}
	}
	if planner := h.fr.ran[1]; !strings.Contains(planner.Prompt, "+step") {
		t.Errorf("the planner's prompt lacks the step's diff:\n%s", planner.Prompt)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "step.txt")); err == nil {
		t.Fatal("the loop wrote in the user's tree")
	}
}

// A room resumed after its process died brings the pending run back.
func TestResumeBringsThePendingRunBack(t *testing.T) {
	h := worktreeHarness(t, "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	id := h.e.wt.Pending().ID
	h2 := &harness{out: h.out, term: &scriptTerm{answers: []string{"y"}}, fr: h.fr, dir: h.dir}
	e2, err := New(Config{Dir: h.dir, Runner: h.fr, Out: h.out, Term: h2.term, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	// The line is said inside the room: it names the room's /resume, not
	// a command line that means leaving the room first.
	if l := e2.KeptRunsLine(); !strings.Contains(l, "1 executor run left by an earlier room, not applied") || !strings.Contains(l, "; /resume brings the newest back") {
		t.Fatalf("kept runs line %q", l)
	}
	h.out.Reset()
	if _, err := e2.Resume(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if r := e2.wt.Pending(); r == nil || r.ID != id || !strings.Contains(h.out.String(), "pending run: codex /execute") {
		t.Fatalf("resume did not bring the run back:\n%s", h.out.String())
	}
	if _, err := e2.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" {
		t.Fatal("the resumed run did not apply")
	}
}

// In place, the agent takes .env out of .gitignore: the user's .env looks
// new to the trees, and /undo must not delete it (it existed before the
// run, ignored).
func TestInPlaceUndoNeverDeletesAnIgnoredFileThatExistedBefore(t *testing.T) {
	h := newHarnessIn(t, true, "y", "y")
	os.WriteFile(filepath.Join(h.dir, ".gitignore"), []byte(".env\nnode_modules/\n"), 0o644)
	exec.Command("git", "-C", h.dir, "add", ".gitignore").Run()
	exec.Command("git", "-C", h.dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "ignore").Run()
	os.WriteFile(filepath.Join(h.dir, ".env"), []byte("SECRET=mine\n"), 0o600)
	os.MkdirAll(filepath.Join(h.dir, "node_modules", "x"), 0o755)
	os.WriteFile(filepath.Join(h.dir, "node_modules", "x", "i.js"), []byte("x\n"), 0o644)
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			os.WriteFile(filepath.Join(r.Dir, ".gitignore"), []byte(""), 0o644)
			os.WriteFile(filepath.Join(r.Dir, "made.txt"), []byte("by the run\n"), 0o644)
		}
		return agents.Result{FinalText: "done"}
	}
	writePlan(t, h, "## Goal\nx\n")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "in place: the executor edits your working tree directly") {
		t.Fatalf("the preview does not say the run is in place:\n%s", h.out.String())
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"keep     .env (it existed before the run, ignored by git: never deleted)", "keep     node_modules/x/i.js", "delete   made.txt (new file)", "cannot be told apart from the agent's"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if read(t, h.dir, ".env") != "SECRET=mine\n" || read(t, h.dir, "node_modules/x/i.js") != "x\n" {
		t.Fatalf("/undo deleted the user's ignored files:\n%s", out)
	}
	if read(t, h.dir, ".gitignore") != ".env\nnode_modules/\n" || !strings.Contains(read(t, h.dir, "made.txt"), "no such file") {
		t.Fatal("/undo did not revert the run's own changes")
	}
}

// The page's view (serve) shows the pending run as the room does.
func TestViewShowsThePendingRun(t *testing.T) {
	h := worktreeHarness(t, "y")
	if _, err := h.e.Process(context.Background(), "/execute"); err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(h.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := v.Panel(context.Background())
	if p.Pending != "3 files changed, not applied" {
		t.Fatalf("the view's pending run: %q", p.Pending)
	}
}

// Where git is missing there is no worktree: the room says so, runs
// nothing, and names --in-place.
func TestNoGitNoWorktreeOffersInPlace(t *testing.T) {
	h := worktreeHarness(t, "y")
	t.Setenv("PATH", t.TempDir()) // no git
	_, err := h.e.Process(context.Background(), "/execute")
	if err == nil || !strings.Contains(err.Error(), "git is not installed") || !strings.Contains(err.Error(), "relay-baton chat --in-place") {
		t.Fatalf("/execute without git: %v", err)
	}
	if len(h.fr.ran) != 0 || len(h.fr.prepared) != 0 {
		t.Fatal("an agent was prepared or ran without its worktree")
	}
}

// The user's own worktree.json (never the repository's) copies an
// ignored .env into the run's worktree, and the preview says so.
func TestUserConfigCopiesAnIgnoredFile(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	os.MkdirAll(filepath.Join(cfg, "relay-baton"), 0o700)
	os.WriteFile(filepath.Join(cfg, "relay-baton", "worktree.json"), []byte(`{"copy": [".env"]}`), 0o600)
	h := worktreeHarness(t, "y")
	os.WriteFile(filepath.Join(h.dir, ".gitignore"), []byte(".env\n"), 0o644)
	os.WriteFile(filepath.Join(h.dir, ".env"), []byte("KEY=1\n"), 0o600)
	var seen string
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		seen = read(t, r.Dir, ".env")
		return agents.Result{FinalText: "done"}
	}
	if _, err := h.e.Process(context.Background(), "/execute"); err != nil {
		t.Fatal(err)
	}
	if seen != "KEY=1\n" {
		t.Fatalf("the worktree's .env: %q", seen)
	}
	if out := h.out.String(); !strings.Contains(out, "but for .env from your worktree.json") || !strings.Contains(out, "from your worktree.json: .env") {
		t.Fatalf("the preview or set-up does not name .env:\n%s", out)
	}
}

// An apply that wrote nothing (every change was in the user's tree
// already) leaves nothing for /undo to take out: /undo says so and asks
// no question.
func TestUndoOfAnApplyThatWroteNothingAsksNothing(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	// The user makes the run's change by hand meanwhile.
	os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
	os.MkdirAll(filepath.Join(h.dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(h.dir, "pkg", "new.txt"), []byte("one\ntwo\n"), 0o644)
	// Applied by another relay-baton (the room's /apply asks nothing of
	// such a run: TestApplyWithNothingToWriteAsksNothing).
	r := h.e.wt.Pending()
	p, err := r.PlanApply(ctx)
	if err != nil || p.Writes() != 0 || p.Conflicts != 0 {
		t.Fatalf("plan %+v %v", p, err)
	}
	if err := r.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	h.out.Reset()
	asked := len(h.term.questions)
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if len(h.term.questions) != asked || strings.Contains(out, "took out 0 files") || !strings.Contains(out, "nothing to take out: /apply wrote no file for codex /execute") {
		t.Fatalf("/undo asked %q:\n%s", h.term.questions[asked:], out)
	}
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" {
		t.Fatal("/undo touched the user's file")
	}
}

// An executor run stopped (Ctrl-C) before it changed a file leaves nothing
// pending: its worktree is removed, as a declined preview's is, and the
// next /execute makes a new one.
func TestAStoppedRunThatChangedNothingIsDiscarded(t *testing.T) {
	h := worktreeHarness(t, "y")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		cancel() // the user's Ctrl-C, before the agent wrote anything
		return agents.Result{ExitCode: -1, Err: context.Canceled}
	}
	before := worktreeCount(t, h.dir)
	h.e.Process(ctx, "/execute")
	if r := h.e.wt.Pending(); r != nil {
		t.Fatalf("a stopped run that changed nothing is still pending (%s):\n%s", r.Worktree, h.out.String())
	}
	if got := h.e.wt.PendingLine(); got != "" {
		t.Errorf("pending line %q", got)
	}
	if n := worktreeCount(t, h.dir); n != before {
		t.Errorf("git worktree list has %d entries, had %d before the run", n, before)
	}
	if list, _ := runs.List(h.dir); len(list) != 0 {
		t.Errorf("runs still lists %d runs", len(list))
	}
	if !strings.Contains(h.out.String(), "was stopped before it changed a file: its worktree") {
		t.Errorf("no word of it:\n%s", h.out.String())
	}
}

// While the executor writes a run (another room's, or this one's), its
// apply, undo and discard are refused, naming who holds it and what to do;
// once the executor ends, /apply brings the run in.
func TestARunStillBeingWrittenIsNotAppliedOrDiscarded(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	ctx := context.Background()
	var during []string
	var listed string
	inner := h.fr.run
	h.fr.run = func(c context.Context, n int, req agents.Request) agents.Result {
		res := inner(c, n, req)
		if req.Role != agents.RoleExecutor {
			return res
		}
		// What another room, or the one-shot apply, undo and discard, do
		// meanwhile: each loads the run from its record.
		pending := runs.Latest(h.dir, runs.Pending)
		if pending == nil {
			during = append(during, "no pending run")
			return res
		}
		other := func() *runs.Run {
			r, err := runs.Load(h.dir, pending.ID)
			if err != nil {
				t.Error(err)
			}
			return r
		}
		if _, err := other().PlanApply(ctx); err != nil {
			during = append(during, "plan apply: "+err.Error())
		}
		if p, err := pending.PlanApply(ctx); err == nil {
			if err := other().Apply(ctx, p); err != nil {
				during = append(during, "apply: "+err.Error())
			}
		}
		if _, err := other().PlanUndo(ctx); err != nil {
			during = append(during, "plan undo: "+err.Error())
		}
		if err := other().Discard(ctx); err != nil {
			during = append(during, "discard: "+err.Error())
		}
		list, _ := RunsOf(ctx, h.dir)
		listed = RunsText(list, time.Now(), nil)
		return res
	}
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	r := h.e.wt.Pending()
	if r == nil {
		t.Fatalf("the run was not kept pending (applied or discarded while it was written?):\n%s", h.out.String())
	}
	if len(during) < 3 {
		t.Fatalf("while the executor ran, apply or discard went ahead: %q", during)
	}
	pid := fmt.Sprintf("pid %d", os.Getpid())
	if h.e.SessionID == "" {
		t.Fatal("the room has no session id to name")
	}
	for _, d := range during {
		if !strings.Contains(d, "cannot") || !strings.Contains(d, "codex /execute is writing it") || !strings.Contains(d, pid) ||
			!strings.Contains(d, "session "+h.e.SessionID) || !strings.Contains(d, "Ctrl-C in that room") {
			t.Errorf("refusal %q does not name the holder (codex /execute, %s, session %s) and what to do", d, pid, h.e.SessionID)
		}
	}
	if want := fmt.Sprintf("being written by codex /execute (%s, session %s): apply or discard it once that run ends", pid, h.e.SessionID); !strings.Contains(listed, want) {
		t.Errorf("runs while it was written:\n%s\nwant %q", listed, want)
	}
	if read(t, h.dir, "main.go") != "package main\n" || !fileExists(filepath.Join(r.Worktree, "pkg", "new.txt")) {
		t.Fatal("the run was applied or discarded while it was written")
	}
	// The executor ended: the run is free.
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "applied 2 files") {
		t.Fatalf("/apply after the run:\n%s", out)
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A run whose every change is in the user's tree already (the user made
// it by hand; the run's deletion apply does not make) leaves nothing to
// apply: /apply lists the paths, says so and asks nothing; the run stays
// pending for /undo to discard.
func TestApplyWithNothingToWriteAsksNothing(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
	os.MkdirAll(filepath.Join(h.dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(h.dir, "pkg", "new.txt"), []byte("one\ntwo\n"), 0o644)
	h.out.Reset()
	asked := len(h.term.questions)
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if len(h.term.questions) != asked {
		t.Fatalf("/apply asked %q:\n%s", h.term.questions[asked:], out)
	}
	for _, want := range []string{"main.go      same", "pkg/new.txt  same", "old.txt      kept", "nothing to apply: your tree has every change of codex /execute", "/undo discards it"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in /apply:\n%s", want, out)
		}
	}
	if strings.Contains(out, "applied 0 files") || h.e.wt.Pending() == nil {
		t.Fatalf("the run was applied:\n%s", out)
	}
	if !fileExists(filepath.Join(h.dir, "old.txt")) {
		t.Fatal("old.txt was deleted")
	}
}
