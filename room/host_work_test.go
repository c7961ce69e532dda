package room

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// newHostWorktreeHarness is a page-hosted room whose executor runs in a
// worktree of its own (as worktreeHarness's: it edits main.go, creates
// pkg/new.txt, deletes old.txt, and writes esc.txt holding an escape and
// a bidi override), with an executor run pending.
func newHostWorktreeHarness(t *testing.T) (*harness, *Host) {
	t.Helper()
	h := &harness{out: &bytes.Buffer{}, fr: &fakeRunner{}, dir: newRepo(t)}
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			os.WriteFile(filepath.Join(r.Dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
			os.MkdirAll(filepath.Join(r.Dir, "pkg"), 0o755)
			os.WriteFile(filepath.Join(r.Dir, "pkg", "new.txt"), []byte("one\ntwo\n"), 0o644)
			os.Remove(filepath.Join(r.Dir, "old.txt"))
			os.WriteFile(filepath.Join(r.Dir, "esc.txt"), []byte("\x1b[2Jclear\u202eflip\n"), 0o644)
		}
		return agents.Result{ExitCode: 0, FinalText: "done"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	host, err := NewHost(ctx, Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.e = host.Engine()
	t.Cleanup(func() {
		cancel()
		host.Close()
	})
	writePlan(t, h, "## Goal\nshout\n")
	hostCommand(t, host, "/execute", "run")
	if h.e.wt.Pending() == nil {
		t.Fatalf("no pending run:\n%s", hostOutput(host))
	}
	return h, host
}

// hostCommand submits line and, when it previews, answers that preview
// with action; it returns when the command has ended.
func hostCommand(t *testing.T, host *Host, line, action string) {
	t.Helper()
	if err := host.Submit(line); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, line+"'s preview or end", func(s HostState) bool { return s.Preview != nil || !s.Busy })
	if s.Preview != nil {
		if err := host.Answer(s.Preview.ID, s.Hash, action, ""); err != nil {
			t.Fatal(err)
		}
	}
	waitHost(t, host, line+"'s end", func(s HostState) bool { return !s.Busy })
}

// TestHostApplyRunsOnlyOnTheClickThatNamesIt: /apply from the page shows
// the terminal's apply preview (every path, its counts and hunks) as a
// preview that waits; a wrong id or hash, Edit and Cancel apply nothing;
// the click naming it applies; /undo's preview waits the same way and
// takes the apply out on its click. /diff shows the run's diff as text.
func TestHostApplyRunsOnlyOnTheClickThatNamesIt(t *testing.T) {
	h, host := newHostWorktreeHarness(t)
	untouched := func(when string) {
		t.Helper()
		if read(t, h.dir, "main.go") != "package main\n" || fileExists(filepath.Join(h.dir, "pkg", "new.txt")) {
			t.Fatalf("%s: the run's change reached the user's tree:\n%s", when, hostOutput(host))
		}
	}
	hostCommand(t, host, "/diff", "")
	if out := hostOutput(host); !strings.Contains(out, "diff: the changes of codex /execute") || strings.Contains(out, "\x1b[") {
		t.Fatalf("/diff in the page:\n%q", out)
	}
	var diff string
	host.mu.Lock()
	for _, o := range host.out {
		if o.Kind == "diff" {
			diff += o.Text
		}
	}
	host.mu.Unlock()
	if !strings.Contains(diff, "+func shout() {}") || !strings.Contains(diff, "+++ b/pkg/new.txt") ||
		!strings.Contains(diff, "+^[[2Jclear<U+202E>flip") || strings.ContainsAny(diff, "\x1b\u202e") {
		t.Fatalf("/diff did not hand the page the run's diff as a diff: %q", diff)
	}

	if err := host.Submit("/apply"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the apply preview", func(s HostState) bool { return s.Preview != nil })
	p := s.Preview
	for _, want := range []string{"/apply brings the change of codex /execute", "main.go      write   (+2 -0, 1 hunk)", "old.txt      kept    (the run deleted it", "pkg/new.txt  create  (+2, new file)"} {
		if !strings.Contains(p.Text, want) {
			t.Fatalf("no %q in the apply preview: %+v", want, p)
		}
	}
	if p.Change != "apply" || p.Command != "apply" || p.Question != "apply these? [y/N] " {
		t.Fatalf("the apply preview: %+v", p)
	}
	if err := host.Answer(p.ID, strings.Repeat("0", 64), "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a wrong hash: %v", err)
	}
	if err := host.Answer("apply-other", s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a wrong id: %v", err)
	}
	if err := host.Answer(p.ID, s.Hash, "edit", "apply something else"); conflictCode(t, err) != "refused" {
		t.Fatalf("an edit of the apply preview: %v", err)
	}
	untouched("after refused answers")
	if err := host.Answer(p.ID, s.Hash, "cancel", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the declined apply's end", func(s HostState) bool { return !s.Busy })
	untouched("after Cancel")
	if h.e.wt.Pending() == nil || !strings.Contains(hostOutput(host), "nothing applied; the run stays pending") {
		t.Fatalf("after Cancel the run is not pending:\n%s", hostOutput(host))
	}
	// The cancelled preview's click, sent again, names nothing that waits.
	if err := host.Answer(p.ID, s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a click on the cancelled preview: %v", err)
	}

	// A new /apply is a new preview: the old click does not answer it.
	if err := host.Submit("/apply"); err != nil {
		t.Fatal(err)
	}
	s2 := waitHost(t, host, "the second apply preview", func(s HostState) bool { return s.Preview != nil })
	if s2.Preview.ID == p.ID {
		t.Fatal("two apply previews share an id")
	}
	if err := host.Answer(p.ID, s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("the old preview's click answered the new one: %v", err)
	}
	untouched("after the old click")
	if err := host.Answer(s2.Preview.ID, s2.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the apply's end", func(s HostState) bool { return !s.Busy })
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" || read(t, h.dir, "pkg/new.txt") != "one\ntwo\n" || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatalf("the click did not apply:\n%s", hostOutput(host))
	}
	if h.e.wt.Pending() != nil {
		t.Fatal("the applied run is still pending")
	}

	// /undo: its preview lists the paths; Cancel keeps the apply, the
	// click naming it takes it out.
	if err := host.Submit("/undo"); err != nil {
		t.Fatal(err)
	}
	u := waitHost(t, host, "the undo preview", func(s HostState) bool { return s.Preview != nil })
	if u.Preview.Change != "undo" || !strings.Contains(u.Preview.Text, "/undo takes out what /apply wrote") || !strings.Contains(u.Preview.Text, "main.go") || !strings.Contains(u.Preview.Text, "pkg/new.txt") {
		t.Fatalf("the undo preview: %+v", u.Preview)
	}
	if err := host.Answer(u.Preview.ID, u.Hash, "cancel", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the declined undo's end", func(s HostState) bool { return !s.Busy })
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" {
		t.Fatal("Cancel on /undo took the apply out")
	}
	hostCommand(t, host, "/undo", "run")
	if read(t, h.dir, "main.go") != "package main\n" || fileExists(filepath.Join(h.dir, "pkg", "new.txt")) || read(t, h.dir, "old.txt") != "old\n" {
		t.Fatalf("the undo click did not take the apply out:\n%s", hostOutput(host))
	}
}

// TestHostApplyOfAMovedFileWritesNothing: a file the user changes between
// the apply's preview and the click makes the click write nothing (the
// preview no longer says what would happen).
func TestHostApplyOfAMovedFileWritesNothing(t *testing.T) {
	h, host := newHostWorktreeHarness(t)
	if err := host.Submit("/apply"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the apply preview", func(s HostState) bool { return s.Preview != nil })
	if err := os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main\n\n// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the apply's end", func(s HostState) bool { return !s.Busy })
	if read(t, h.dir, "main.go") != "package main\n\n// mine\n" || fileExists(filepath.Join(h.dir, "pkg", "new.txt")) {
		t.Fatalf("an apply whose preview no longer held wrote:\n%s", hostOutput(host))
	}
	if h.e.wt.Pending() == nil || !strings.Contains(hostOutput(host), "your files changed since the preview") {
		t.Fatalf("the run is not pending, or the page was not told:\n%s", hostOutput(host))
	}
}

// TestHostDiscardsThePendingRunOnTheClick: /undo before /apply previews
// the discard; only its click removes the run.
func TestHostDiscardsThePendingRunOnTheClick(t *testing.T) {
	h, host := newHostWorktreeHarness(t)
	r := h.e.wt.Pending()
	hostCommand(t, host, "/undo", "cancel")
	if h.e.wt.Pending() == nil || !fileExists(r.Worktree) {
		t.Fatal("Cancel discarded the run")
	}
	if err := host.Submit("/undo"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the discard preview", func(s HostState) bool { return s.Preview != nil })
	if s.Preview.Change != "discard" || s.Preview.Command != "undo" || !strings.Contains(s.Preview.Text, "/undo discards codex /execute") {
		t.Fatalf("the discard preview: %+v", s.Preview)
	}
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the discard's end", func(s HostState) bool { return !s.Busy })
	if h.e.wt.Pending() != nil || fileExists(r.Worktree) {
		t.Fatalf("the click did not discard the run:\n%s", hostOutput(host))
	}
}

// TestHostInPlaceRevertOnTheClick: in place, /undo's revert preview (each
// file it restores) waits for its click too; Cancel reverts nothing.
func TestHostInPlaceRevertOnTheClick(t *testing.T) {
	h, host := newHostHarness(t)
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			os.WriteFile(filepath.Join(r.Dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
		}
		return agents.Result{ExitCode: 0, FinalText: "done"}
	}
	writePlan(t, h, "## Goal\nshout\n")
	hostCommand(t, host, "/execute", "run")
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" {
		t.Fatalf("the in-place run did not edit:\n%s", hostOutput(host))
	}
	hostCommand(t, host, "/undo", "cancel")
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" || !strings.Contains(hostOutput(host), "nothing reverted.") {
		t.Fatalf("Cancel reverted:\n%s", hostOutput(host))
	}
	if err := host.Submit("/undo"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the revert preview", func(s HostState) bool { return s.Preview != nil })
	if s.Preview.Change != "revert" || s.Preview.Command != "undo" || !strings.Contains(s.Preview.Text, "restore  main.go (+2 -0)") {
		t.Fatalf("the revert preview: %+v", s.Preview)
	}
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the revert's end", func(s HostState) bool { return !s.Busy })
	if read(t, h.dir, "main.go") != "package main\n" {
		t.Fatalf("the click did not revert:\n%s", hostOutput(host))
	}
}
