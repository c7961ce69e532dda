package prompts

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

const samplePlan = `## Goal
Add a --verbose flag.

## Steps
1. Edit main.go to parse --verbose.
2. Add main_test.go.`

func TestGolden(t *testing.T) {
	cases := map[string]string{
		"plan":           Plan(PlanInput{Task: "Add a --verbose flag to the CLI.\n"}),
		"replan":         Plan(PlanInput{Task: "Also log to a file.", Previous: samplePlan, RepoMap: "main.go\nmain_test.go"}),
		"execute":        Execute(samplePlan),
		"continue-first": ContinueStep(ContinueInput{Plan: samplePlan, Step: 1, MaxSteps: 3}),
		"continue-next":  ContinueStep(ContinueInput{Plan: samplePlan, Step: 2, MaxSteps: 3, Previous: "Changed main.go."}),
		"continue-plan": ContinuePlan(ContinuePlanInput{Plan: samplePlan, Step: 1, MaxSteps: 3, Executor: "codex",
			Answer: "Changed main.go; go test ./... passed.", ChangedFiles: "M main.go", Diff: "+flag.Bool(\"verbose\")"}),
		"continue-plan-resumed": ContinuePlan(ContinuePlanInput{Plan: samplePlan, Step: 2, MaxSteps: 3, Executor: "codex",
			DiffNote: "The step's own diff is gone (the loop was resumed): the working tree's diff against HEAD"}),
		"review":         Review(ReviewInput{Plan: samplePlan, ChangedFiles: "M main.go", Diff: "+flag.Bool(\"verbose\")"}),
		"review-empty":   Review(ReviewInput{}),
		"handoff":        Handoff(HandoffInput{From: "claude", To: "codex", Handoff: "# Handoff\n## Goal\nx"}),
		"ask":            Ask(AskInput{Question: "What does step 2 mean?", Plan: samplePlan}),
		"ask-plan-known": Ask(AskInput{Question: "And step 3?", PlanKnown: true}),
		"ask-noplan":     Ask(AskInput{Question: "hello?"}),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./prompts -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test ./prompts -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
			}
		})
	}
}

func TestPlanHasEverySection(t *testing.T) {
	p := Plan(PlanInput{Task: "t"})
	last := -1
	for _, s := range PlanSections {
		i := strings.Index(p, "## "+s+"\n")
		if i < 0 || i < last {
			t.Fatalf("section %q missing or out of order in:\n%s", s, p)
		}
		last = i
	}
}

func TestTemplateTextIsNotInterpreted(t *testing.T) {
	// User text containing template syntax must arrive verbatim.
	q := "what is {{.Plan}} and {{define \"x\"}}?"
	if p := Ask(AskInput{Question: q}); !strings.Contains(p, q) {
		t.Fatalf("question altered:\n%s", p)
	}
}

func TestParsePlanUpdate(t *testing.T) {
	tests := []struct {
		in       string
		plan     string
		complete bool
	}{
		{"## Goal\nx\n## Next step\ny\n", "## Goal\nx\n## Next step\ny", false},
		{"## Goal\nx\n\nPLAN COMPLETE\n", "## Goal\nx", true},
		{"## Goal\nx\r\nPLAN COMPLETE\r\n\r\n", "## Goal\nx", true},
		{"## Goal\nx\n  PLAN COMPLETE  \n\n\n", "## Goal\nx", true},
		{"PLAN COMPLETE", "", true},
		// Strict: only alone on the last non-blank line.
		{"## Goal\nPLAN COMPLETE\n## Next step\ny", "## Goal\nPLAN COMPLETE\n## Next step\ny", false},
		{"## Goal\nx\nPLAN COMPLETE.", "## Goal\nx\nPLAN COMPLETE.", false},
		{"## Goal\nx\n**PLAN COMPLETE**", "## Goal\nx\n**PLAN COMPLETE**", false},
		{"## Goal\nx\nplan complete", "## Goal\nx\nplan complete", false},
		{"## Goal\nx\nThe plan is not PLAN COMPLETE", "## Goal\nx\nThe plan is not PLAN COMPLETE", false},
		{"", "", false},
	}
	for _, tc := range tests {
		plan, complete := ParsePlanUpdate(tc.in)
		if plan != tc.plan || complete != tc.complete {
			t.Errorf("ParsePlanUpdate(%q) = %q, %v; want %q, %v", tc.in, plan, complete, tc.plan, tc.complete)
		}
	}
}

func TestContinuePlanNamesTheMarker(t *testing.T) {
	p := ContinuePlan(ContinuePlanInput{Plan: samplePlan, Step: 1, MaxSteps: 2})
	if !strings.Contains(p, "\n"+PlanCompleteMarker+"\n") {
		t.Fatalf("the marker is not alone on a line of the prompt:\n%s", p)
	}
}
