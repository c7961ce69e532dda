package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// repo is a committed repository of files, runs kept in a folder of the
// test's.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	t.Cleanup(WaitRemovals) // before the folder's own removal
	dir := agenttest.GitRepo(t, files)
	testkit.Git(t, dir, "add", ".")
	testkit.Git(t, dir, "commit", "-qm", "init")
	return dir
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil
}

// gitFacts is what a run must never change in the user's repository:
// HEAD, the index file, the branches.
func gitFacts(t *testing.T, dir string) string {
	t.Helper()
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	return testkit.Git(t, dir, "rev-parse", "HEAD") + testkit.Git(t, dir, "branch", "-a") + string(idx)
}

func worktrees(t *testing.T, dir string) int {
	return strings.Count(testkit.Git(t, dir, "worktree", "list", "--porcelain"), "worktree ")
}

func start(t *testing.T, dir string, o Options) *Run {
	t.Helper()
	r, err := Start(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func planApply(t *testing.T, r *Run) *Plan {
	t.Helper()
	p, err := r.PlanApply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func planUndo(t *testing.T, r *Run) *Plan {
	t.Helper()
	p, err := r.PlanUndo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const lines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"

func TestStartHoldsWhatTheUserSeesAndTouchesNothingOfTheirs(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "staged.txt": "s\n", "gone.txt": "g\n", ".gitignore": ".env\nbuild/\n"})
	write(t, dir, "a.txt", strings.Replace(lines, "two", "TWO", 1)) // uncommitted
	os.Remove(filepath.Join(dir, "gone.txt"))                       // deleted, not committed
	write(t, dir, "staged.txt", "staged\n")
	testkit.Git(t, dir, "add", "staged.txt")
	write(t, dir, "new/untracked.txt", "mine\n")
	write(t, dir, ".env", "SECRET=1\n")
	write(t, dir, "build/out.bin", "big\n")
	write(t, dir, "local.db", "db\n")
	testkit.Git(t, dir, "status") // the index refreshed now, not by a later git
	facts := gitFacts(t, dir)

	r := start(t, dir, Options{Copy: []string{"local.db", "missing.txt"}})
	if !strings.HasPrefix(r.Worktree, os.Getenv("RELAY_BATON_WORKTREES")) {
		t.Fatalf("worktree %s not in the cache folder", r.Worktree)
	}
	wt := r.Worktree
	if got := read(t, wt, "a.txt"); !strings.Contains(got, "TWO") {
		t.Errorf("the worktree lacks the uncommitted edit: %q", got)
	}
	if read(t, wt, "staged.txt") != "staged\n" || read(t, wt, "new/untracked.txt") != "mine\n" {
		t.Error("the worktree lacks the staged or untracked file")
	}
	if exists(wt, "gone.txt") {
		t.Error("the worktree has a file the user deleted")
	}
	if exists(wt, ".env") || exists(wt, "build/out.bin") {
		t.Error("an ignored file was copied without the user's config listing it")
	}
	if !exists(wt, "local.db") {
		t.Error("local.db, listed in the user's config, was not copied")
	}
	if head := strings.TrimSpace(testkit.Git(t, wt, "rev-parse", "HEAD")); head != r.Head {
		t.Errorf("worktree HEAD %s, want %s", head, r.Head)
	}
	if b := strings.TrimSpace(testkit.Git(t, wt, "branch", "--show-current")); b != "" {
		t.Errorf("the worktree is on branch %q, want a detached HEAD", b)
	}
	if st := testkit.Git(t, wt, "status", "--porcelain"); !strings.Contains(st, " M a.txt") || !strings.Contains(st, "?? new/") {
		t.Errorf("git status in the worktree does not show the user's changes as changes:\n%s", st)
	}
	if gitFacts(t, dir) != facts {
		t.Error("Start changed the user's HEAD, branches or index")
	}
	if worktrees(t, dir) != 2 {
		t.Errorf("git worktree list: %s", testkit.Git(t, dir, "worktree", "list"))
	}
	ch, _, err := r.Changes(context.Background())
	if err != nil || len(ch) != 0 {
		t.Fatalf("a fresh run has changes %v (%v)", ch, err)
	}
	if got := Latest(dir, Pending); got == nil || got.ID != r.ID {
		t.Fatalf("Latest: %v", got)
	}
}

func TestTheRunsChangeReachesTheUserOnlyAfterApply(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "gone.txt": "x\n"})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "five", "FIVE", 1))
	write(t, r.Worktree, "pkg/new.go", "package pkg\n")
	os.Remove(filepath.Join(r.Worktree, "gone.txt"))
	if read(t, dir, "a.txt") != lines || exists(dir, "pkg/new.go") {
		t.Fatal("the run's change is in the user's tree before apply")
	}
	ch, _, err := r.Changes(context.Background())
	if err != nil || len(ch) != 3 {
		t.Fatalf("changes %v %v", ch, err)
	}
	d, _ := r.Diff(context.Background())
	if !strings.Contains(d, "+FIVE") {
		t.Errorf("diff: %s", d)
	}
	facts := gitFacts(t, dir)
	p := planApply(t, r)
	acts := map[string]string{}
	for _, pp := range p.Paths {
		acts[pp.Path] = pp.Action
		if pp.Path == "a.txt" && pp.Hunks != 1 {
			t.Errorf("a.txt: %d hunks, want 1", pp.Hunks)
		}
	}
	if acts["a.txt"] != ActWrite || acts["pkg/new.go"] != ActCreate || acts["gone.txt"] != ActKeep || p.Conflicts != 0 {
		t.Fatalf("plan %+v", p.Paths)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, dir, "a.txt"), "FIVE") || read(t, dir, "pkg/new.go") != "package pkg\n" {
		t.Error("apply did not bring the change")
	}
	if !exists(dir, "gone.txt") {
		t.Error("apply deleted a file that existed before the run")
	}
	if exists(r.Worktree, "") || worktrees(t, dir) != 1 {
		t.Errorf("the applied run's worktree is left: %s", testkit.Git(t, dir, "worktree", "list"))
	}
	if gitFacts(t, dir) != facts {
		t.Error("apply changed the user's HEAD, branches or index")
	}
	// Undo takes exactly that out: the new file and its folder go.
	r2, err := Load(dir, r.ID)
	if err != nil || r2.State != Applied {
		t.Fatalf("load %v %v", r2, err)
	}
	u := planUndo(t, r2)
	if err := r2.Undo(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "a.txt") != lines || exists(dir, "pkg") || !exists(dir, "gone.txt") {
		t.Error("undo did not take out exactly what apply wrote")
	}
	if list, _ := List(dir); len(list) != 0 {
		t.Errorf("runs left after undo: %v", list)
	}
}

// The agent removes .env from .gitignore: the user's ignored .env is not
// the run's and survives apply and undo.
func TestUnignoredEnvSurvivesApplyAndUndo(t *testing.T) {
	for _, copied := range []bool{false, true} {
		t.Run(map[bool]string{false: "not copied", true: "copied by the user's config"}[copied], func(t *testing.T) {
			dir := repo(t, map[string]string{".gitignore": ".env\nnode_modules/\n", "a.txt": "a\n"})
			write(t, dir, ".env", "SECRET=mine\n")
			write(t, dir, "node_modules/x/index.js", "x\n")
			var o Options
			if copied {
				o.Copy = []string{".env"}
			}
			r := start(t, dir, o)
			write(t, r.Worktree, ".gitignore", "node_modules/\n")
			p := planApply(t, r)
			if p.Conflicts != 0 {
				t.Fatalf("plan %+v", p.Paths)
			}
			if err := r.Apply(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if read(t, dir, ".env") != "SECRET=mine\n" || read(t, dir, ".gitignore") != "node_modules/\n" {
				t.Fatal("after apply")
			}
			if err := r.Undo(context.Background(), planUndo(t, r)); err != nil {
				t.Fatal(err)
			}
			if read(t, dir, ".env") != "SECRET=mine\n" || read(t, dir, "node_modules/x/index.js") != "x\n" || read(t, dir, ".gitignore") != ".env\nnode_modules/\n" {
				t.Fatal("undo lost the user's ignored files or did not restore .gitignore")
			}
		})
	}
}

// An ignored file of the user's that the run writes with other content
// stops the apply: it is never overwritten.
func TestAnIgnoredFileIsNeverOverwritten(t *testing.T) {
	dir := repo(t, map[string]string{".gitignore": ".env\n", "a.txt": "a\n"})
	write(t, dir, ".env", "SECRET=mine\n")
	r := start(t, dir, Options{})
	write(t, r.Worktree, ".gitignore", "")
	write(t, r.Worktree, ".env", "SECRET=agent\n")
	write(t, r.Worktree, "a.txt", "A\n")
	p := planApply(t, r)
	if p.Conflicts != 1 {
		t.Fatalf("plan %+v", p.Paths)
	}
	if err := r.Apply(context.Background(), p); !errors.Is(err, ErrConflict) {
		t.Fatalf("apply: %v", err)
	}
	if read(t, dir, ".env") != "SECRET=mine\n" || read(t, dir, "a.txt") != "a\n" || read(t, dir, ".gitignore") != ".env\n" {
		t.Fatal("a conflicted apply wrote something")
	}
}

// What the user does during a run is theirs: an edit of another hunk of
// a file the run changes is merged, a new file is left, and both survive
// undo.
func TestTheUsersEditDuringARunSurvivesApplyAndUndo(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "b.txt": "b\n"})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "nine", "NINE", 1))
	// Meanwhile, in the user's tree:
	write(t, dir, "a.txt", strings.Replace(lines, "one", "ONE", 1))
	write(t, dir, "notes.txt", "my notes\n")
	write(t, dir, "b.txt", "b edited\n")
	p := planApply(t, r)
	if p.Conflicts != 0 || len(p.Paths) != 1 || p.Paths[0].Action != ActMerge {
		t.Fatalf("plan %+v", p.Paths)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	both := strings.Replace(strings.Replace(lines, "one", "ONE", 1), "nine", "NINE", 1)
	if read(t, dir, "a.txt") != both || read(t, dir, "notes.txt") != "my notes\n" || read(t, dir, "b.txt") != "b edited\n" {
		t.Fatalf("after apply: %q", read(t, dir, "a.txt"))
	}
	// Another edit after the apply, away from the run's hunk.
	write(t, dir, "a.txt", strings.Replace(both, "three", "THREE", 1))
	if err := r.Undo(context.Background(), planUndo(t, r)); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(lines, "one", "ONE", 1), "three", "THREE", 1)
	if read(t, dir, "a.txt") != want || read(t, dir, "notes.txt") != "my notes\n" || read(t, dir, "b.txt") != "b edited\n" {
		t.Fatalf("after undo: %q", read(t, dir, "a.txt"))
	}
}

func TestAConflictIsReportedWithNothingHalfApplied(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "b.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "four", "run's four", 1))
	write(t, r.Worktree, "b.txt", strings.Replace(lines, "four", "FOUR", 1))
	write(t, r.Worktree, "c.txt", "new\n")
	write(t, dir, "b.txt", strings.Replace(lines, "four", "my four", 1))
	p := planApply(t, r)
	if p.Conflicts != 1 {
		t.Fatalf("plan %+v", p.Paths)
	}
	for _, pp := range p.Paths {
		if (pp.Path == "b.txt") != (pp.Conflict != "") {
			t.Errorf("%s: conflict %q", pp.Path, pp.Conflict)
		}
	}
	if err := r.Apply(context.Background(), p); !errors.Is(err, ErrConflict) {
		t.Fatalf("apply: %v", err)
	}
	if read(t, dir, "a.txt") != lines || exists(dir, "c.txt") || !strings.Contains(read(t, dir, "b.txt"), "my four") {
		t.Fatal("something was applied")
	}
	if r.State != Pending || !exists(r.Worktree, "c.txt") {
		t.Fatal("the run is not pending any more after a refused apply")
	}
}

func TestUndoRefusesWhatTheUserChangedSinceTheApply(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "b.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "four", "FOUR", 1))
	write(t, r.Worktree, "b.txt", strings.Replace(lines, "four", "FOUR", 1))
	write(t, r.Worktree, "new.txt", "new\n")
	if err := r.Apply(context.Background(), planApply(t, r)); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "b.txt", strings.Replace(lines, "four", "FOUR and mine", 1))
	write(t, dir, "new.txt", "new, and mine\n")
	u := planUndo(t, r)
	if u.Conflicts != 2 {
		t.Fatalf("undo plan %+v", u.Paths)
	}
	if err := r.Undo(context.Background(), u); !errors.Is(err, ErrConflict) {
		t.Fatalf("undo: %v", err)
	}
	if !strings.Contains(read(t, dir, "a.txt"), "FOUR") || read(t, dir, "new.txt") != "new, and mine\n" {
		t.Fatal("a refused undo reverted something")
	}
}

func TestApplyRefusesWhenTheTreeMovedAfterThePreview(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "four", "FOUR", 1))
	p := planApply(t, r)
	write(t, dir, "a.txt", strings.Replace(lines, "four", "mine", 1))
	if err := r.Apply(context.Background(), p); !errors.Is(err, ErrMoved) {
		t.Fatalf("apply: %v", err)
	}
	if !strings.Contains(read(t, dir, "a.txt"), "mine") {
		t.Fatal("the user's edit was overwritten")
	}
}

func TestDiscardLeavesNoWorktreeAndTheUsersTreeAlone(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, "a.txt", "mine\n")
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", "run\n")
	u := planUndo(t, r)
	if !u.Discard {
		t.Fatal("undo of a pending run is not a discard")
	}
	if err := r.Undo(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "a.txt") != "mine\n" || worktrees(t, dir) != 1 || exists(r.Worktree, "") || exists(r.Dir(), "") {
		t.Fatalf("after discard: %s", testkit.Git(t, dir, "worktree", "list"))
	}
}

// A relay-baton SIGKILLed mid-run leaves its run listed; discarding it
// leaves no worktree.
func TestAKilledRunIsListedAndDiscarded(t *testing.T) {
	if os.Getenv("RUNS_HELPER") != "" {
		return
	}
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperStartsARunAndHangs$")
	cmd.Env = append(os.Environ(), "RUNS_HELPER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf) // the helper says "started" once its run is recorded, then waits
	if !strings.Contains(string(buf[:n]), "started") {
		t.Fatalf("helper: %q", buf[:n])
	}
	// While it runs, its run is its own: no apply, undo or discard.
	held := Latest(dir, Pending)
	if held == nil {
		t.Fatal("the helper's run is not listed")
	}
	_, err = held.PlanApply(context.Background())
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) || busy.Holder.PID != cmd.Process.Pid || busy.Holder.Session != "helper-session" ||
		!strings.Contains(err.Error(), fmt.Sprintf("codex /execute is writing it, running since %s in the relay-baton of pid %d (the room of session helper-session)", busy.Holder.Since.Local().Format("15:04:05"), cmd.Process.Pid)) {
		t.Fatalf("apply of a held run: %v", err)
	}
	if err := held.Discard(context.Background()); !errors.Is(err, ErrBusy) || !strings.HasPrefix(err.Error(), "cannot discard run "+held.ID) {
		t.Fatalf("discard of a held run: %v", err)
	}
	if _, err := held.Hold(Holder{PID: os.Getpid()}); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second executor on a held run: %v", err)
	}
	// A killed holder holds nothing.
	cmd.Process.Kill()
	cmd.Wait()
	list, err := List(dir)
	if err != nil || len(list) != 1 || list[0].State != Pending || list[0].PID != cmd.Process.Pid {
		t.Fatalf("list after the kill: %v %v", list, err)
	}
	r := list[0]
	if read(t, r.Worktree, "a.txt") != "agent\n" {
		t.Fatal("the killed run's work is gone")
	}
	if err := r.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if worktrees(t, dir) != 1 {
		t.Fatalf("worktree list: %s", testkit.Git(t, dir, "worktree", "list"))
	}
	if list, _ := List(dir); len(list) != 0 {
		t.Fatalf("runs left: %v", list)
	}
}

func TestHelperStartsARunAndHangs(t *testing.T) {
	dir := os.Getenv("RUNS_HELPER")
	if dir == "" {
		t.Skip("helper of TestAKilledRunIsListedAndDiscarded")
	}
	r, err := Start(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Hold(Holder{PID: os.Getpid(), Session: "helper-session", Agent: "codex", Command: "execute", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(r.Worktree, "a.txt"), []byte("agent\n"), 0o644)
	os.Stdout.WriteString("started\n")
	select {} // killed here
}

func TestNoCommitAndConfigPathsOutsideAreRefused(t *testing.T) {
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	empty := agenttest.GitRepo(t, map[string]string{"a.txt": "a\n"})
	if _, err := Start(context.Background(), empty, Options{}); !errors.Is(err, ErrNoCommit) {
		t.Fatalf("no commit: %v", err)
	}
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	if _, err := Start(context.Background(), dir, Options{Copy: []string{"../secret"}}); err == nil {
		t.Fatal("a config path outside the repository was accepted")
	}
	if worktrees(t, dir) != 1 {
		t.Fatal("a failed start left a worktree")
	}
	if list, _ := List(dir); len(list) != 0 {
		t.Fatalf("a failed start left a record: %v", list)
	}
}

func TestAWorktreeFolderInsideTheRepositoryIsRefused(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	t.Setenv("RELAY_BATON_WORKTREES", filepath.Join(dir, ".cache", "wt"))
	if _, err := Start(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "inside the repository") {
		t.Fatalf("start: %v", err)
	}
	if exists(dir, ".cache") {
		t.Fatal("the refused folder was made")
	}
}

// A run that changes more files than one command line carries applies
// and undoes whole.
func TestManyFilesApplyAndUndo(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 250; i++ {
		files[fmt.Sprintf("d/f%03d.txt", i)] = "x\n"
	}
	dir := repo(t, files)
	r := start(t, dir, Options{})
	for i := 0; i < 250; i++ {
		write(t, r.Worktree, fmt.Sprintf("d/f%03d.txt", i), "y\n")
	}
	p := planApply(t, r)
	if len(p.Paths) != 250 || p.Conflicts != 0 {
		t.Fatalf("plan: %d paths, %d conflicts", len(p.Paths), p.Conflicts)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "d/f000.txt") != "y\n" || read(t, dir, "d/f249.txt") != "y\n" {
		t.Fatal("not every file was applied")
	}
	if err := r.Undo(context.Background(), planUndo(t, r)); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "d/f000.txt") != "x\n" || read(t, dir, "d/f249.txt") != "x\n" {
		t.Fatal("not every file was undone")
	}
}

// The counts of a run's change are git's own (git diff --numstat), the
// hunks as many as the patch's "@@" lines: lines that look like patch
// headers, a missing last newline, a binary file, a new and a deleted
// file.
func TestChangeCountsAreGits(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "b.txt": "++ x\n-- y\n", "gone.txt": "1\n2\n", "bin.dat": "bin\x00ary"})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(strings.Replace(lines, "one", "ONE", 1), "nine", "+++ nine\n--- x", 1))
	write(t, r.Worktree, "b.txt", "+++ x\n-- y\nno newline")
	write(t, r.Worktree, "new.txt", "diff --git a b\n@@ -1 +1 @@\n")
	write(t, r.Worktree, "bin.dat", "bin\x00ary2")
	os.Remove(filepath.Join(r.Worktree, "gone.txt"))
	ch, after, err := r.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	num, err := r.git(context.Background(), dir, "", "diff", "--numstat", r.Base, after)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(num), "\n") {
		f := strings.Fields(l)
		want[f[2]] = f[0] + " " + f[1]
	}
	if len(ch) != len(want) {
		t.Fatalf("changes %+v, git says %v", ch, want)
	}
	for _, c := range ch {
		got := fmt.Sprintf("%d %d", c.Added, c.Deleted)
		if c.Binary {
			got = "- -"
		}
		if got != want[c.Path] {
			t.Errorf("%s: %s, git says %s", c.Path, got, want[c.Path])
		}
	}
	hunks := map[string]int{}
	for _, pp := range planApply(t, r).Paths {
		hunks[pp.Path] = pp.Hunks
	}
	if hunks["a.txt"] != 2 || hunks["b.txt"] != 1 || hunks["new.txt"] != 1 || hunks["bin.dat"] != 0 {
		t.Errorf("hunks %v", hunks)
	}
}

// Paths git quotes (a quote, a tab, a newline) and one starting with ":"
// (pathspec magic) are applied and undone like any other.
func TestOddPathsApplyAndUndo(t *testing.T) {
	names := []string{"q\"uote.txt", "tab\tname.txt", "new\nline.txt", ":colon.txt", "back\\slash.txt"}
	files := map[string]string{".gitignore": ":ignored\n"}
	for _, n := range names {
		files[n] = lines
	}
	dir := repo(t, files)
	write(t, dir, ":ignored", "keep\n")
	r := start(t, dir, Options{})
	for _, n := range names {
		write(t, r.Worktree, n, strings.Replace(lines, "nine", "run", 1))
		write(t, dir, n, strings.Replace(lines, "one", "mine", 1)) // the user's edit meanwhile: a merge
	}
	write(t, r.Worktree, ".gitignore", "")
	write(t, r.Worktree, ":ignored", "run's\n")
	p := planApply(t, r)
	acts := map[string]string{}
	for _, pp := range p.Paths {
		acts[pp.Path] = pp.Action + pp.Conflict
	}
	for _, n := range names {
		if acts[n] != ActMerge {
			t.Errorf("%q: %q, want a merge", n, acts[n])
		}
	}
	if !strings.Contains(acts[":ignored"], "ignored by git") {
		t.Errorf(":ignored: %q, want a conflict (ignored in your tree)", acts[":ignored"])
	}
	if p.Conflicts != 1 {
		t.Fatalf("plan %+v", p.Paths)
	}
	write(t, r.Worktree, ":ignored", "keep\n") // the same as the user's: nothing to do
	p = planApply(t, r)
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatalf("apply: %v (plan %+v)", err, p.Paths)
	}
	for _, n := range names {
		if got := read(t, dir, n); !strings.Contains(got, "mine") || !strings.Contains(got, "run") {
			t.Errorf("%q after apply: %q", n, got)
		}
	}
	if err := r.Undo(context.Background(), planUndo(t, r)); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if got := read(t, dir, n); !strings.Contains(got, "mine") || strings.Contains(got, "run") {
			t.Errorf("%q after undo: %q", n, got)
		}
	}
	if read(t, dir, ":ignored") != "keep\n" {
		t.Error("the ignored file was touched")
	}
}

// A file the user makes, between the preview and the yes, where the run
// makes one is not overwritten, ignored or not.
func TestApplyRefusesAFileMadeAfterThePreview(t *testing.T) {
	for _, name := range []string{"new.txt", "made.log"} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t, map[string]string{".gitignore": "*.log\n"})
			r := start(t, dir, Options{})
			write(t, r.Worktree, name, "run's\n")
			write(t, r.Worktree, ".gitignore", "") // the run un-ignores its file
			p := planApply(t, r)
			if len(p.Paths) != 2 || p.Paths[1].Path != name || p.Paths[1].Action != ActCreate {
				t.Fatalf("plan %+v", p.Paths)
			}
			write(t, dir, name, "mine\n")
			if err := r.Apply(context.Background(), p); !errors.Is(err, ErrMoved) {
				t.Fatalf("apply: %v", err)
			}
			if read(t, dir, name) != "mine\n" {
				t.Fatal("the user's file was overwritten")
			}
		})
	}
}

// A folder on the way to a file the run creates, made a link between the
// preview and the yes, is not written through.
func TestApplyRefusesALinkMadeOnTheWayAfterThePreview(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	elsewhere := t.TempDir()
	r := start(t, dir, Options{})
	write(t, r.Worktree, "pkg/new.txt", "run's\n")
	p := planApply(t, r)
	if len(p.Paths) != 1 || p.Paths[0].Action != ActCreate {
		t.Fatalf("plan %+v", p.Paths)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "pkg")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := r.Apply(context.Background(), p); !errors.Is(err, ErrMoved) {
		t.Fatalf("apply: %v", err)
	}
	if exists(elsewhere, "new.txt") {
		t.Fatal("the apply wrote through the link")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "pkg")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the user's link was replaced")
	}
}

// twoScreens is one run (it makes new.txt) read by two screens, a and
// b, with b's apply previewed.
func twoScreens(t *testing.T) (dir string, a, b *Run, pb *Plan) {
	t.Helper()
	dir = repo(t, map[string]string{"a.txt": lines})
	a = start(t, dir, Options{})
	write(t, a.Worktree, "new.txt", "run's\n")
	b, err := Load(dir, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return dir, a, b, planApply(t, b)
}

// Two screens hold one run (each read its record): what one does, the
// other finds under the run's lock and does nothing, and never writes
// over the first's record.
func TestTwoScreensOneRun(t *testing.T) {
	ctx := context.Background()
	t.Run("applied by the other", func(t *testing.T) {
		dir, a, b, pb := twoScreens(t)
		if err := a.Apply(ctx, planApply(t, a)); err != nil {
			t.Fatal(err)
		}
		var ee *ElsewhereError
		if err := b.Apply(ctx, pb); !errors.As(err, &ee) || ee.State != Applied || !strings.Contains(err.Error(), "/undo takes out what that apply wrote") {
			t.Fatalf("b's apply after a's: %v", err)
		}
		b.Files = 7
		b.saveCount() // b's summary, its record still pending in memory
		if now, err := Load(dir, a.ID); err != nil || now.State != Applied || len(now.Wrote) != 1 {
			t.Fatalf("a's apply record after b's count: %+v, %v", now, err)
		}
		if err := b.Undo(ctx, planUndo(t, b)); !errors.Is(err, ErrElsewhere) { // b would discard: a's record must stay
			t.Fatalf("b's discard of the applied run: %v", err)
		}
		if now, err := Load(dir, a.ID); err != nil || now.State != Applied {
			t.Fatalf("the applied run's record after b's discard: %+v, %v", now, err)
		}
		if err := a.Undo(ctx, planUndo(t, a)); err != nil {
			t.Fatal(err)
		}
		if exists(dir, "new.txt") {
			t.Fatal("a's undo left the file")
		}
	})
	t.Run("discarded by the other", func(t *testing.T) {
		dir, a, b, pb := twoScreens(t)
		if err := a.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		WaitRemovals()
		var ee *ElsewhereError
		if err := b.Apply(ctx, pb); !errors.As(err, &ee) || ee.State != "" || !strings.Contains(err.Error(), "discarded run") {
			t.Fatalf("b's apply after a's discard: %v", err)
		}
		if exists(dir, "new.txt") {
			t.Fatal("a discarded run was applied")
		}
	})
}
