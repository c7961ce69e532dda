package room

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// TestReviewMatchesStepsByPath: a change to greet.py ticks the step that
// names greet.py, not "Add a test to test_greet.py", and then rightly
// says that no tests were touched.
func TestReviewMatchesStepsByPath(t *testing.T) {
	h := newHarness(t)
	writePlan(t, h, "## Steps\n1. Add shout() to greet.py.\n2. Add a test to test_greet.py\n3. Update `docs/usage.md`\n4. Touch src/greet.py\n")
	touch(h.dir, "greet.py", "def shout(s):\n    return s.upper()\n")
	r, err := h.e.Review(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.PlanSteps[0].Files, r.PlanSteps[1].Files, r.PlanSteps[2].Files, r.PlanSteps[3].Files)
	if got != "[greet.py] [] [] []" {
		t.Fatalf("steps matched %s", got)
	}
	text := r.Text()
	if !strings.Contains(text, "✓ step 1") || !strings.Contains(text, "· step 2: Add a test to test_greet.py") || !strings.Contains(text, "no tests touched") || len(r.NotInPlan) != 0 {
		t.Fatalf("%s", text)
	}
	// A file in a folder is named by its path, a tail of it, or its name.
	os.Mkdir(filepath.Join(h.dir, "docs"), 0o755)
	touch(h.dir, "docs/usage.md", "x\n")
	touch(h.dir, "test_greet.py", "def test_shout(): pass\n")
	touch(h.dir, "greeting.py", "x\n")
	if r, err = h.e.Review(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = fmt.Sprint(r.PlanSteps[0].Files, r.PlanSteps[1].Files, r.PlanSteps[2].Files, r.PlanSteps[3].Files)
	if got != "[greet.py] [test_greet.py] [docs/usage.md] []" || fmt.Sprint(r.NotInPlan) != "[greeting.py]" || fmt.Sprint(r.TestsTouched) != "[test_greet.py]" {
		t.Fatalf("steps matched %s, not in plan %v, tests %v", got, r.NotInPlan, r.TestsTouched)
	}
}

// TestPlanOverAPlanBacksItUp: /plan over an existing plan keeps the old
// one as /replan does.
func TestPlanOverAPlanBacksItUp(t *testing.T) {
	h := newHarness(t, "y", "y")
	h.fr.run = func(_ context.Context, i int, r agents.Request) agents.Result {
		return agents.Result{FinalText: fmt.Sprintf("## Goal\nplan %d", i+1)}
	}
	if _, err := h.e.Process(context.Background(), "/plan first"); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "plan.*.md")); len(m) != 0 {
		t.Fatalf("a first plan made backups %v", m)
	}
	if _, err := h.e.Process(context.Background(), "/plan second"); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "plan.*.md"))
	if len(m) != 1 {
		t.Fatalf("backups %v", m)
	}
	if b, _ := os.ReadFile(m[0]); string(b) != "## Goal\nplan 1\n" {
		t.Fatalf("backup holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "plan.md")); string(b) != "## Goal\nplan 2\n" {
		t.Fatalf("plan.md holds %q", b)
	}
	if !strings.Contains(h.out.String(), "backed up the previous plan as .ai-session/plan.") {
		t.Fatalf("%s", h.out.String())
	}
}

// TestEndedCodexSessionIsCalledCodex: /target of a Codex thread that has
// ended says "Codex session", not "Claude Code session".
func TestEndedCodexSessionIsCalledCodex(t *testing.T) {
	h := newHarness(t)
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	const id = "019a0000-0000-7000-8000-000000000001"
	day := filepath.Join(home, "sessions", "2026", "12", "02")
	os.MkdirAll(day, 0o700)
	meta := fmt.Sprintf(`{"timestamp":"2026-12-02T05:00:00.000Z","type":"session_meta","payload":{"id":%q,"cwd":%q,"originator":"codex-tui","source":"cli","cli_version":"0.169.0"}}`+"\n", id, h.dir)
	if err := os.WriteFile(filepath.Join(day, "rollout-2026-12-02T05-00-00-"+id+".jsonl"), []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := h.e.Process(context.Background(), "/target "+id)
	if err == nil || !strings.Contains(err.Error(), "Codex session "+id+" is not running") {
		t.Fatalf("/target of an ended Codex thread: %v", err)
	}
	help := HelpText()
	if !strings.Contains(help, "Claude Code or Codex") || strings.Contains(strings.ReplaceAll(help, "\n", " "), "Claude Code session") {
		t.Fatalf("/help:\n%s", help)
	}
}
