package worktrack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// fakeRoom is what a Tracker is given of the engine that drives it: what
// it says and logs is kept, its confirmations answered by yes.
type fakeRoom struct {
	said, printed strings.Builder
	logged        []events.Meta
	asked         []string
	yes           bool
	diff          string
}

func (f *fakeRoom) deps(root string, inPlace bool) Deps {
	return Deps{Root: root, SessionID: "s1", Dir: root, InPlace: inPlace,
		Now: func() time.Time { return time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC) },
		Say: func(format string, a ...any) { fmt.Fprintf(&f.said, format+"\n", a...) },
		Emit: func(_ events.Role, _ string, _ map[string]string, m events.Meta) string {
			f.logged = append(f.logged, m)
			return "id"
		},
		Confirm: func(kind, text, question string) (bool, error) {
			f.asked = append(f.asked, kind)
			return f.yes, nil
		},
		ShowDiff: func(diff, cut string) { f.diff = diff + cut },
		Print:    func(s string) { f.printed.WriteString(s) },
	}
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	write(t, dir, "a.txt", "one\n")
	testkit.Git(t, dir, "add", ".")
	testkit.Git(t, dir, "commit", "-qm", "init")
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "(none)"
	}
	return string(b)
}

// TestInPlaceRunDiffAndUndo drives a tracker as the engine does around an
// executor run in the user's tree: the tree before, the run's edit, the
// tree after; /diff shows the run's change and /undo, on a yes, puts the
// files back.
func TestInPlaceRunDiffAndUndo(t *testing.T) {
	root := newRepo(t)
	f := &fakeRoom{yes: true}
	tr := New(f.deps(root, true))
	defer tr.Close()
	ctx := context.Background()
	req := agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Dir: tr.RunDir(agents.RoleExecutor)}
	if req.Dir != root || tr.WorktreeMode() || tr.Line(req) == "" {
		t.Fatalf("in place: dir %s, worktree mode %v, line %q", req.Dir, tr.WorktreeMode(), tr.Line(req))
	}
	before := tr.Before(ctx, req)
	if before == "" {
		t.Fatal("no tree before the run")
	}
	write(t, root, "a.txt", "two\n")
	write(t, root, "b.txt", "new\n")
	tr.After(ctx, "execute", req, before)
	if !strings.Contains(f.said.String(), "changed 2 files: +2 -1") || len(tr.Files()) != 2 {
		t.Fatalf("summary: %q, files %v", f.said.String(), tr.Files())
	}
	if err := tr.Diff(ctx, "a.txt"); err != nil || !strings.Contains(f.diff, "+two") || strings.Contains(f.diff, "b.txt") {
		t.Fatalf("/diff a.txt: %v %q", err, f.diff)
	}
	if err := tr.Undo(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if read(t, root, "a.txt") != "one\n" || read(t, root, "b.txt") != "(none)" || len(f.asked) != 1 || f.asked[0] != "revert" {
		t.Fatalf("after /undo: a=%q b=%q asked %v", read(t, root, "a.txt"), read(t, root, "b.txt"), f.asked)
	}
	if tr.Files() != nil {
		t.Fatal("the work is still there after /undo")
	}
}

// TestWorktreeRunApply: an executor run reserves a worktree, works there
// (the user's files untouched), and /apply brings its change in on a yes;
// a no applies nothing and leaves the run pending.
func TestWorktreeRunApply(t *testing.T) {
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	root := newRepo(t)
	f := &fakeRoom{}
	tr := New(f.deps(root, false))
	defer tr.Close()
	ctx := context.Background()
	req := agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Dir: tr.RunDir(agents.RoleExecutor)}
	if req.Dir == root || tr.Run() == nil || !tr.Run().Reserved() {
		t.Fatalf("no worktree reserved: %s", req.Dir)
	}
	if err := tr.Ready(req); err != nil {
		t.Fatal(err)
	}
	if err := tr.Enter(ctx, req, "execute"); err != nil {
		t.Fatal(err)
	}
	before := tr.Before(ctx, req)
	write(t, req.Dir, "a.txt", "two\n")
	tr.After(ctx, "execute", req, before)
	if tr.Pending() == nil || tr.PendingLine() != "1 file changed, not applied" || read(t, root, "a.txt") != "one\n" {
		t.Fatalf("pending %v %q, user's a.txt %q", tr.Pending(), tr.PendingLine(), read(t, root, "a.txt"))
	}
	if err := tr.Apply(ctx, ""); err != nil || read(t, root, "a.txt") != "one\n" || tr.Pending() == nil {
		t.Fatalf("declined /apply: %v, a.txt %q", err, read(t, root, "a.txt"))
	}
	f.yes = true
	if err := tr.Apply(ctx, ""); err != nil || read(t, root, "a.txt") != "two\n" || tr.Pending() != nil {
		t.Fatalf("/apply: %v, a.txt %q, said %s", err, read(t, root, "a.txt"), f.said.String())
	}
	if err := tr.Runs(ctx, ""); err != nil || !strings.Contains(f.printed.String(), "applied (1 file written)") {
		t.Fatalf("/runs: %v %q", err, f.printed.String())
	}
}

// TestCancelReservedRemovesTheFolder: a declined preview's reserved
// worktree goes, and nothing is left pending.
func TestCancelReservedRemovesTheFolder(t *testing.T) {
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	root := newRepo(t)
	f := &fakeRoom{}
	tr := New(f.deps(root, false))
	defer tr.Close()
	dir := tr.RunDir(agents.RoleExecutor)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("reserved folder: %v", err)
	}
	tr.CancelReserved()
	if _, err := os.Stat(dir); !os.IsNotExist(err) || tr.Run() != nil {
		t.Fatalf("after cancel: %v, run %v", err, tr.Run())
	}
}

// TestDiffIsInert: file contents are untrusted; no escape byte reaches the
// terminal, coloured or not.
func TestDiffIsInert(t *testing.T) {
	for _, c := range []bool{false, true} {
		d := ColorDiff("diff --git a/x b/x\n+\x1b]0;pwned\x07 \x9b31m\n-gone\n", c)
		if strings.Contains(d, "\x07") || strings.Contains(d, "\x1b]") || strings.Contains(d, "\x9b") {
			t.Fatalf("color %v: %q", c, d)
		}
		if c && !strings.Contains(d, "\x1b[") {
			t.Fatalf("no colour: %q", d)
		}
		if !c && strings.Contains(d, "\x1b[") {
			t.Fatalf("colour under NO_COLOR: %q", d)
		}
	}
}
