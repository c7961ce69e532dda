package room

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/panel"
	"github.com/relay-baton/relay-baton/room/repofacts"
)

// The panel's git facts come from a cache refreshed in the background
// (repofacts.Cache): these tests hold it to what git says after an agent run and
// after edits made outside the room, and check that a prompt does not wait
// for a dear refresh and that refreshes do not pile up.

// panelUntil calls Panel until cond holds (a refresh may still be running
// when the signals could not tell a change), failing after d.
// patient makes e's git facts wait for every refresh a signal asks for,
// however slow git is on a loaded machine: for tests of what the facts
// say, not of how long a prompt waits (TestPanelDoesNotWaitForADearRefresh
// keeps the real bounds).
func patient(e *Engine) *Engine {
	e.repo.WaitWrong, e.repo.CheapRefresh = 10*time.Minute, 10*time.Minute
	e.repo.MinAge = 10 * time.Minute // facts expire only when a test says so
	return e
}

func panelUntil(t *testing.T, e *Engine, d time.Duration, what string, cond func(panel.Facts) bool) panel.Facts {
	t.Helper()
	d = max(d, time.Minute) // a hang guard, never a bound on a loaded machine
	deadline := time.Now().Add(d)
	for {
		p := e.Panel(context.Background())
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: panel still %+v after %v", what, p, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// After an agent run the panel counts what the agent changed, at once,
// even when the run changed nothing the cheap signals see (files edited in
// place: the top folder, the index and HEAD are as they were).
func TestPanelAfterAgentRun(t *testing.T) {
	h := newHarness(t, "y")
	patient(h.e)
	if p := h.e.Panel(context.Background()); p.Changed != 0 || p.GitPending || p.GitAge != 0 {
		t.Fatalf("before the run: %+v", p)
	}
	before := h.e.repo.Signal(h.e.last)
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		touch(h.dir, "main.go", "package main // edited by the agent\n")
		touch(h.dir, "old.txt", "rewritten\n")
		return agents.Result{FinalText: "edited"}
	}
	if _, err := h.e.Process(context.Background(), "edit main.go and old.txt"); err != nil {
		t.Fatal(err)
	}
	if h.fr.runs() != 1 {
		t.Fatalf("%d runs", h.fr.runs())
	}
	if after := h.e.repo.Signal(before.Run); after != before {
		t.Fatalf("the test meant the files to change without a signal: %+v -> %+v", before, after)
	}
	p := h.e.Panel(context.Background())
	if p.Changed != 2 || p.GitAge != 0 || p.GitPending {
		t.Fatalf("after the run: %+v (want 2 changed, fresh)", p)
	}
	if !strings.Contains(p.Line(200, false), "· 2 changed ·") {
		t.Fatalf("line %q", p.Line(200, false))
	}
}

// Edits made outside the room: a new file at the top (the top folder's
// time moves) and a staged file (the index moves) show at the next prompt;
// an in-place edit deep in the tree, which no cheap signal sees, shows once
// the facts expire.
func TestPanelAfterOutsideEdits(t *testing.T) {
	h := newHarness(t)
	patient(h.e)
	ctx := context.Background()
	if p := h.e.Panel(ctx); p.Changed != 0 {
		t.Fatalf("clean repo: %+v", p)
	}
	touch(h.dir, "new.txt", "x\n")
	if p := h.e.Panel(ctx); p.Changed != 1 || p.GitAge != 0 {
		t.Fatalf("after a new file: %+v", p)
	}
	gitRun(t, h.dir, "add", "new.txt")
	if p := h.e.Panel(ctx); p.Changed != 1 || p.GitAge != 0 {
		t.Fatalf("after git add: %+v", p)
	}
	gitRun(t, h.dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "add new.txt")
	if p := h.e.Panel(ctx); p.Changed != 0 {
		t.Fatalf("after a commit: %+v", p)
	}
	// Deep and in place: no signal moves, so the count is the cached one
	// until the facts expire (200 ms here instead of 2 s).
	if err := os.MkdirAll(filepath.Join(h.dir, "pkg", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	touch(h.dir, "pkg/deep/a.go", "package deep\n")
	gitRun(t, h.dir, "add", ".")
	gitRun(t, h.dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "deep")
	if p := h.e.Panel(ctx); p.Changed != 0 {
		t.Fatalf("after the deep commit: %+v", p)
	}
	h.e.repo.MinAge = 200 * time.Millisecond
	touch(h.dir, "pkg/deep/a.go", "package deep // edited in an editor\n")
	panelUntil(t, h.e, 5*time.Second, "in-place deep edit", func(p panel.Facts) bool { return p.Changed == 1 })
}

// A dear refresh (a large repository) is not waited for when only the
// signals moved: the prompt gets the last count, marked with its age, and
// the new count once the refresh is done.
func TestPanelDoesNotWaitForADearRefresh(t *testing.T) {
	h := newHarness(t)
	c := h.e.repo
	slow := make(chan struct{})
	c.GatherFn = func(sig *repofacts.Signal) repofacts.Facts {
		f := c.Gather(sig)
		<-slow
		f.Took = 2 * time.Second // as a walk of a large tree would
		return f
	}
	close(slow) // the first refresh is waited for: nothing is known yet
	if p := h.e.Panel(context.Background()); p.Changed != 0 || p.GitPending {
		t.Fatalf("first panel: %+v", p)
	}
	slow = make(chan struct{})
	touch(h.dir, "new.txt", "x\n")
	// The refresh cannot finish before slow is closed below: a panel that
	// waited for it would never return (Within fails it).
	p := agenttest.Within(t, "a panel while a dear refresh runs", func() panel.Facts { return h.e.Panel(context.Background()) })
	if p.Changed != 0 || p.GitAge <= 0 {
		t.Fatalf("while refreshing: %+v (want the last count with its age)", p)
	}
	if l := p.Line(200, false); !strings.Contains(l, "0 changed 0s ago") {
		t.Fatalf("line %q", l)
	}
	close(slow)
	c.Wait()
	if p := h.e.Panel(context.Background()); p.Changed != 1 || p.GitAge != 0 {
		t.Fatalf("after the refresh: %+v", p)
	}
}

// Many prompts' worth of requests while things change: one refresh at a
// time, coalesced, and the last one sees the final state.
func TestPanelRefreshesCoalesce(t *testing.T) {
	h := newHarness(t)
	patient(h.e)
	c := h.e.repo
	var running, most atomic.Int32
	c.GatherFn = func(sig *repofacts.Signal) repofacts.Facts {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		return c.Gather(sig)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		touch(h.dir, fmt.Sprintf("f%02d.txt", i), "x\n")
		wg.Go(func() { h.e.repo.Get(context.Background(), nil) })
	}
	wg.Wait()
	c.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d refreshes ran at once", most.Load())
	}
	n := c.Refreshes()
	if n >= 20 {
		t.Fatalf("%d refreshes for 20 requests: not coalesced", n)
	}
	if p := h.e.Panel(context.Background()); p.Changed != 20 || p.GitAge != 0 {
		t.Fatalf("final: %+v", p)
	}
}

// bigRepo makes a repository with one commit and n untracked files in
// 100 folders, the shape of a build tree or a vendored checkout.
func bigRepo(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v %s", err, out)
	}
	touch(dir, "main.go", "package main\n")
	exec.Command("git", "-C", dir, "add", ".").Run()
	exec.Command("git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init").Run()
	for d := range 100 {
		sub := filepath.Join(dir, "gen", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		for f := range n / 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", f)), []byte("generated\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}

// BenchmarkNoopTurnBigRepo: a no-op turn (/note) with the panel before
// the next prompt, in a repository with 100,000 untracked files (and in a
// small one for comparison). The git facts are refreshed in the
// background; the turn does not wait for the walk.
func BenchmarkNoopTurnBigRepo(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"untracked=100000", 100_000}, {"untracked=100", 100}} {
		b.Run(c.name, func(b *testing.B) {
			dir := bigRepo(b, c.n)
			e, err := New(Config{Dir: dir, Runner: &fakeRunner{}})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			e.Panel(ctx) // the first prompt: the first walk
			e.repo.Wait()
			if p := e.Panel(ctx); p.Changed != c.n {
				b.Fatalf("panel %+v, want %d changed", p, c.n)
			}
			for b.Loop() {
				if _, err := e.Process(ctx, "/note benchmark"); err != nil {
					b.Fatal(err)
				}
				if p := e.Panel(ctx); p.Changed != c.n {
					b.Fatalf("panel %+v", p)
				}
			}
		})
	}
}
