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
	"github.com/relay-baton/relay-baton/reports"
)

func TestPanelFacts(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := h.e.Panel(ctx)
	if p.Plan || p.Changed != 0 || p.Last != nil || p.Active != agents.Claude || p.Target != "" || p.Ratio <= 0 || p.Ratio > 0.01 {
		t.Fatalf("empty room panel %+v", p)
	}
	planAged(t, h, "## Goal\nx\n## Steps\n1. main.go\n", 90*time.Minute)
	touch(h.dir, "new.txt", "x")
	touch(h.dir, "main.go", "package main // changed\n")
	h.e.Active = agents.Codex
	h.e.last = &reports.LastRun{Agent: agents.Codex, Command: "execute", At: harnessNow.Add(-time.Minute)}
	p = h.e.Panel(ctx)
	if !p.Plan || p.PlanAge != 90*time.Minute || len(p.PlanMissing) != 6 || p.Changed != 2 || p.Last == nil || p.LastAgo != time.Minute || p.Ratio <= 0.0004 {
		t.Fatalf("panel %+v", p)
	}
	planAged(t, h, fullPlan, time.Minute)
	if p = h.e.Panel(ctx); len(p.PlanMissing) != 0 || !strings.Contains(p.Line(200, false), "plan 1m gate ok") {
		t.Fatalf("full plan: %+v %q", p, p.Line(200, false))
	}
}

// BenchmarkPanel measures gathering the context before a prompt (git
// status, diff and ls-files, plan.md, budget) in a small repository.
func BenchmarkPanel(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
	for i := range 50 {
		touch(dir, fmt.Sprintf("f%02d.go", i), "package main\n")
	}
	exec.Command("git", "-C", dir, "add", ".").Run()
	exec.Command("git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init").Run()
	touch(dir, "f01.go", "package main\n// changed\n")
	e, err := New(Config{Dir: dir, Runner: &fakeRunner{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	os.WriteFile(filepath.Join(e.SessionDir, "plan.md"), []byte(fullPlan), 0o600)
	ctx := context.Background()
	for b.Loop() {
		if p := e.Panel(ctx); p.Changed != 1 || !p.Plan {
			b.Fatalf("%+v", p)
		}
	}
}
