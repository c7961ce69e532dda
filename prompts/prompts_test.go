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
		"review":         Review(ReviewInput{Plan: samplePlan, ChangedFiles: "M main.go", Diff: "+flag.Bool(\"verbose\")"}),
		"review-empty":   Review(ReviewInput{}),
		"handoff":        Handoff(HandoffInput{From: "claude", To: "codex", Handoff: "# Handoff\n## Goal\nx"}),
		"ask":            Ask(AskInput{Question: "What does step 2 mean?", Plan: samplePlan}),
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
