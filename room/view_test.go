package room

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestViewFollowsTheRoom: a View in another "process" (its own reader of the
// same files) shows what the room's panel shows, and catches up with
// /agent switches and runs as they are logged, without writing anything.
func TestViewFollowsTheRoom(t *testing.T) {
	h := newHarness(t, "y")
	ctx := context.Background()
	v, err := OpenView(h.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Panel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Active != "claude" || p.Plan || p.Last != nil {
		t.Fatalf("fresh view: %+v", p)
	}
	if _, err := h.e.Process(ctx, "/agent codex"); err != nil {
		t.Fatal(err)
	}
	writePlan(t, h, "## Goal\nx\n")
	if p, err = v.Panel(ctx); err != nil || p.Active != "codex" || !p.Plan {
		t.Fatalf("after /agent codex and a plan: %+v %v", p, err)
	}
	if len(p.PlanMissing) == 0 {
		t.Fatal("the plan's gate should list missing sections")
	}
	if _, err := h.e.Process(ctx, "/execute"); err != nil {
		t.Fatal(err)
	}
	if p, err = v.Panel(ctx); err != nil || p.Last == nil || p.Last.Agent != "codex" {
		t.Fatalf("after /execute: %+v %v", p.Last, err)
	}
	// The room's own panel agrees on the facts both know.
	rp := h.e.Panel(ctx)
	if rp.Active != p.Active || rp.Plan != p.Plan || rp.Changed != p.Changed || rp.Diet != p.Diet {
		t.Fatalf("room panel %+v, view panel %+v", rp, p)
	}
	// A truncated log starts the view over.
	if err := os.Truncate(logFile(h.dir), 0); err != nil {
		t.Fatal(err)
	}
	if p, err = v.Panel(ctx); err != nil || p.Active != "claude" || p.Last != nil {
		t.Fatalf("after truncation: %+v %v", p, err)
	}
}

func TestViewCreatesNothing(t *testing.T) {
	dir := newRepo(t)
	v, err := OpenView(dir, "caveman")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Panel(context.Background())
	if err != nil || p.Diet != "caveman" || p.Active != "claude" {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ai-session")); !os.IsNotExist(err) {
		t.Fatalf("the view created .ai-session (%v)", err)
	}
	if _, err := OpenView(dir, "nope"); err == nil {
		t.Fatal("unknown diet accepted")
	}
}

func logFile(dir string) string { return filepath.Join(dir, ".ai-session", "conversation.jsonl") }
