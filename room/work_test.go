package room

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// workHarness is a room whose executor edits main.go (one line added),
// creates new.txt and deletes old.txt.
func workHarness(t *testing.T, answers ...string) *harness {
	t.Helper()
	h := newHarness(t, answers...)
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

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func TestExecutePrintsChangeSummary(t *testing.T) {
	h := workHarness(t, "y")
	if _, err := h.e.Process(context.Background(), "/execute"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"changed 3 files: +4 -1", "main.go      +2 -0", "old.txt      -1 (deleted)", "pkg/new.txt  +2 (new file)", "/diff shows the changes, /undo reverts them"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	var ch *events.Event
	list := h.events(t)
	for i := range list {
		if list[i].Kind == events.KindChanges {
			ch = &list[i]
		}
	}
	if ch == nil {
		t.Fatalf("no changes event: %s", kinds(list))
	}
	m, _ := events.MetaOf[events.ChangesMeta](ch)
	if *m.Files != 3 || *m.Added != 4 || *m.Deleted != 1 || strings.Join(m.NewFiles, ",") != "pkg/new.txt" || strings.Join(m.DeletedFiles, ",") != "old.txt" || m.Undo || ch.Role != events.RoleCodex {
		t.Fatalf("changes meta %+v (role %s)", m, ch.Role)
	}
	if ch.Text != "3 files by codex /execute, +4 -1: main.go, old.txt, pkg/new.txt" {
		t.Fatalf("changes text %q", ch.Text)
	}
}

func TestAskChangesNothingPrintsNoSummary(t *testing.T) {
	h := newHarness(t, "y")
	if err := h.e.Ask(context.Background(), "what is this?"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.out.String(), "changed ") || h.e.wt.Files() != nil {
		t.Fatalf("a read-only ask printed a change summary:\n%s", h.out.String())
	}
}

func TestDiffShowsTheLastRunOnly(t *testing.T) {
	h := workHarness(t, "y")
	ctx := context.Background()
	// A change made before the run is not the run's.
	os.WriteFile(filepath.Join(h.dir, "mine.txt"), []byte("my own edit\n"), 0o644)
	if _, err := h.e.Process(ctx, "/diff"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "no agent run in this room has changed files yet") {
		t.Fatalf("/diff before any run:\n%s", h.out.String())
	}
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/diff"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if !strings.Contains(out, "+func shout() {}") || !strings.Contains(out, "-old") || !strings.Contains(out, "+two") || strings.Contains(out, "my own edit") {
		t.Fatalf("/diff:\n%s", out)
	}
	h.out.Reset()
	h.e.Process(ctx, "/diff main.go")
	if out := h.out.String(); !strings.Contains(out, "+func shout() {}") || strings.Contains(out, "+two") {
		t.Fatalf("/diff main.go:\n%s", out)
	}
	h.out.Reset()
	h.e.Process(ctx, "/diff --all")
	if out := h.out.String(); !strings.Contains(out, "+my own edit") || !strings.Contains(out, "+func shout() {}") {
		t.Fatalf("/diff --all:\n%s", out)
	}
	if _, err := h.e.Process(ctx, "/diff --nope"); err == nil || !strings.Contains(err.Error(), "/diff [file] or /diff --all") {
		t.Fatalf("/diff --nope: %v", err)
	}
}

func TestUndoRevertsTheRunOnly(t *testing.T) {
	h := workHarness(t, "y", "y")
	ctx := context.Background()
	// Before the run: an edit of the user's, staged, and one not staged.
	os.WriteFile(filepath.Join(h.dir, "staged.txt"), []byte("staged\n"), 0o644)
	gitRun(t, h.dir, "add", "staged.txt")
	os.WriteFile(filepath.Join(h.dir, "mine.txt"), []byte("mine\n"), 0o644)
	index := gitRun(t, h.dir, "ls-files", "-s")
	headBefore := gitRun(t, h.dir, "rev-parse", "HEAD")
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"delete   pkg/new.txt (new file)", "restore  old.txt (deleted by the run)", "restore  main.go (+2 -0)", "reverted 3 files of codex /execute"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	if q := h.term.questions[len(h.term.questions)-1]; q != "revert these files? [y/N] " {
		t.Fatalf("asked %q", q)
	}
	if got := read(t, h.dir, "main.go"); got != "package main\n" {
		t.Fatalf("main.go %q", got)
	}
	if got := read(t, h.dir, "old.txt"); got != "old\n" {
		t.Fatalf("old.txt %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "pkg")); !os.IsNotExist(err) {
		t.Fatalf("pkg/ left behind: %v", err)
	}
	if read(t, h.dir, "mine.txt") != "mine\n" || read(t, h.dir, "staged.txt") != "staged\n" {
		t.Fatal("/undo touched files the run did not change")
	}
	if got := gitRun(t, h.dir, "ls-files", "-s"); got != index {
		t.Fatalf("the index changed:\n%s\nwas\n%s", got, index)
	}
	if got := gitRun(t, h.dir, "rev-parse", "HEAD"); got != headBefore {
		t.Fatal("HEAD moved")
	}
	var undo []events.ChangesMeta
	for _, ev := range h.events(t) {
		if ev.Kind == events.KindChanges {
			m, _ := events.MetaOf[events.ChangesMeta](&ev)
			if m.Undo {
				undo = append(undo, m)
			}
		}
	}
	if len(undo) != 1 || undo[0].Refused != "" || *undo[0].Files != 3 {
		t.Fatalf("undo events %+v", undo)
	}
	h.out.Reset()
	h.e.Process(ctx, "/undo")
	if !strings.Contains(h.out.String(), "nothing to undo") {
		t.Fatalf("a second /undo:\n%s", h.out.String())
	}
}

func TestUndoRefusesAFileChangedSince(t *testing.T) {
	h := workHarness(t, "y", "y")
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main\n\nfunc shout() {}\n// mine\n"), 0o644)
	h.out.Reset()
	h.e.Process(ctx, "/undo")
	if out := h.out.String(); !strings.Contains(out, "/undo refused, nothing reverted: changed since codex's run: main.go") {
		t.Fatalf("/undo:\n%s", out)
	}
	if !strings.Contains(read(t, h.dir, "main.go"), "// mine") || read(t, h.dir, "pkg/new.txt") != "one\ntwo\n" {
		t.Fatal("a refused /undo changed files")
	}
	if h.term.asked != 1 {
		t.Fatalf("a refused /undo asked %d questions", h.term.asked)
	}
}

func TestUndoDeclinedRevertsNothing(t *testing.T) {
	h := workHarness(t, "y", "n")
	ctx := context.Background()
	h.e.Process(ctx, "/execute")
	h.e.Process(ctx, "/undo")
	if !strings.Contains(h.out.String(), "nothing reverted.") || read(t, h.dir, "pkg/new.txt") != "one\ntwo\n" {
		t.Fatalf("declined /undo:\n%s", h.out.String())
	}
}

// TestUndoDoesNotFollowALink: a run that replaced a file by a link to a
// file outside the repository; /undo puts the file back and leaves the
// outside file alone.
func TestUndoDoesNotFollowALink(t *testing.T) {
	h := newHarness(t, "y", "y")
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("keep\n"), 0o600)
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		os.Remove(filepath.Join(r.Dir, "old.txt"))
		os.Symlink(outside, filepath.Join(r.Dir, "old.txt"))
		return agents.Result{FinalText: "done"}
	}
	writePlan(t, h, "## Goal\nx\n")
	ctx := context.Background()
	h.e.Process(ctx, "/execute")
	if _, err := h.e.Process(ctx, "/undo"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, "", outside); got != "keep\n" {
		t.Fatalf("the outside file is %q", got)
	}
	fi, err := os.Lstat(filepath.Join(h.dir, "old.txt"))
	if err != nil || !fi.Mode().IsRegular() || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatalf("old.txt not restored: %v %v\n%s", fi, err, h.out.String())
	}
}

func TestDiffCompletion(t *testing.T) {
	h := workHarness(t, "y")
	words := func(text string) string {
		out, _ := Complete(h.e, text)
		var w []string
		for _, r := range out {
			w = append(w, string(r))
		}
		return strings.Join(w, "|")
	}
	if got := words("/diff "); got != "--all " {
		t.Fatalf("/diff before a run completes %q", got)
	}
	if got := words("/un"); got != "do " {
		t.Fatalf("/un completes %q", got)
	}
	h.e.Process(context.Background(), "/execute")
	if got := words("/diff "); got != "--all |main.go |old.txt |pkg/new.txt " {
		t.Fatalf("/diff after a run completes %q", got)
	}
	if got := words("/diff pkg/"); got != "new.txt " {
		t.Fatalf("/diff pkg/ completes %q", got)
	}
	if got := words("/diff --all "); got != "" {
		t.Fatalf("/diff --all completes %q", got)
	}
}
