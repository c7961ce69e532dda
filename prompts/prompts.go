// Package prompts renders the prompts relay-baton hands to agents: plan,
// execute, the two halves of a bounded continue loop's step (the executor's
// work, then the planner's plan update, with its PLAN COMPLETE marker and
// ParsePlanUpdate), review, handoff and a free-text ask, and the framing of a live chat message delivered into a
// running Claude Code session (FrameChat). The agent prompts are
// text/templates filled from small input structs, so what an agent receives
// is reviewable in one place; golden tests pin them (go test ./prompts
// -update rewrites them).
package prompts

import (
	"strings"
	"sync"
	"text/template"
)

// PlanSections are the headings a plan.md must have, in order.
var PlanSections = []string{"Goal", "Scope (in)", "Out of scope", "Approach", "Steps", "Risks", "Verification", "Next step"}

var funcs = template.FuncMap{
	"trim":     strings.TrimSpace,
	"sections": func() []string { return PlanSections },
	"marker":   func() string { return PlanCompleteMarker },
}

// tmpl is parsed on first use, not at start-up: parsing the templates is
// about three quarters of the instructions relay-baton runs before main,
// and most commands (the hooks, run once per turn of a Claude Code
// session, above all) render no prompt.
var tmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("prompts").Funcs(funcs).Parse(templates)) })

const templates = `
{{- define "rules" -}}
Rules: do not commit, push or open a pull request; relay-baton and the user decide that.
Never print secrets or API keys.
{{- end -}}

{{- define "plan" -}}
You are the planner in a relay-baton session. Write an implementation plan for the task below.
Do not change any file: relay-baton writes your final answer to .ai-session/plan.md.

Task:
{{trim .Task}}
{{- if .Previous}}

The current plan, which this one replaces (keep what still holds):
{{trim .Previous}}
{{- end}}
{{- if .RepoMap}}

Repository files (truncated to the budget):
{{trim .RepoMap}}
{{- end}}

Answer with the plan only, in Markdown, with exactly these second-level headings in this order:
{{range sections}}## {{.}}
{{end -}}
Under "## Steps" give a numbered list; each step names the files it touches.
{{template "rules"}}
{{end -}}

{{- define "execute" -}}
You are the executor in a relay-baton session. Implement the plan below in this repository.
Work through its Steps in order, run the Verification it names, and keep changes minimal.

Plan (.ai-session/plan.md):
{{trim .Plan}}

When you finish, answer with: the files you changed, what you verified (commands and results),
and anything left undone.
{{template "rules"}}
{{end -}}

{{- define "continue" -}}
You are the executor in a relay-baton session, in step {{.Step}} of at most {{.MaxSteps}} of a bounded
plan<->execute loop. After each step the planner reads your answer and the diff, and updates the plan.
Work on the plan's "## Next step" (without one, the first step under "## Steps" not marked [done]).
Make concrete progress on it; if the whole plan is already done, change nothing and say "done".

Plan (.ai-session/plan.md):
{{trim .Plan}}

Outcome of the previous step:
{{if .Previous}}{{trim .Previous}}{{else}}(none: this is the first step){{end}}

When you finish, answer with: the files you changed, the tests or checks you ran and their
results, and what remains.
{{template "rules"}}
{{end -}}

{{- define "continue-plan" -}}
You are the planner in a relay-baton session. Step {{.Step}} of at most {{.MaxSteps}} of a bounded
plan<->execute loop just ended: the executor ({{.Executor}}) worked on the plan's next step.
Read its outcome below and update the plan. Do not change any file: relay-baton backs up the
current plan and writes your final answer to .ai-session/plan.md.

The current plan (.ai-session/plan.md):
{{trim .Plan}}

The executor's answer (its changed files, test results, what remains):
{{if .Answer}}{{trim .Answer}}{{else}}(empty){{end}}

Files changed in this step:
{{if .ChangedFiles}}{{trim .ChangedFiles}}{{else}}(none){{end}}

{{if .DiffNote}}{{.DiffNote}}{{else}}Diff of this step{{end}} (truncated to the budget):
{{if .Diff}}{{trim .Diff}}{{else}}(empty){{end}}

Answer with the whole updated plan in Markdown, with the same second-level headings:
- under "## Steps", mark each step the diff and test results show done with " [done]" at the end
  of its line (trust the diff and the test results over the executor's claims);
- rewrite "## Next step" as the one concrete thing the executor should do next.
If the whole plan is done (every step done and its Verification passed), end your answer, after
the updated plan, with this line and nothing after it:
{{marker}}
Write that line only when the plan is complete.
{{template "rules"}}
{{end -}}

{{- define "review" -}}
You are the reviewer in a relay-baton session. Review the working-tree changes against the plan.
Do not change any file.

Plan (.ai-session/plan.md):
{{if .Plan}}{{trim .Plan}}{{else}}(no plan.md){{end}}

Changed files:
{{if .ChangedFiles}}{{trim .ChangedFiles}}{{else}}(none){{end}}

Diff (truncated to the budget):
{{if .Diff}}{{trim .Diff}}{{else}}(empty){{end}}

Answer with: plan steps done and not done, risky changes (deletions, large diffs, secrets,
missing tests), and the tests you would add. Be specific: name files and lines.
{{end -}}

{{- define "handoff" -}}
You are taking over a relay-baton session as {{.To}}{{if .From}} from {{.From}}{{end}}.
The handoff document below says where the work stands. Read it, then continue with its
"Next Steps" and "Instructions for Next Agent".

Handoff (.ai-session/handoff.md):
{{trim .Handoff}}

When you finish, answer with: the files you changed, what you verified, and what remains.
{{template "rules"}}
{{end -}}

{{- define "ask" -}}
The user asks you a question from the relay-baton Agent Room. Answer it conversationally.
This is a read-only turn: do not change any file and do not run commands that modify the
repository.
{{- if .Plan}}

For context, the current plan (.ai-session/plan.md):
{{trim .Plan}}
{{- else if .PlanKnown}}

For context, the current plan (.ai-session/plan.md) is the one already in this conversation,
unchanged.
{{- end}}

Question:
{{trim .Question}}
{{end -}}
`

func render(name string, data any) string {
	var b strings.Builder
	if err := tmpl().ExecuteTemplate(&b, name, data); err != nil {
		// The templates are fixed and their inputs are plain strings: an
		// error here is a programming error caught by the golden tests.
		panic("prompts: " + name + ": " + err.Error())
	}
	return b.String()
}

// PlanInput is what the plan prompt needs. Previous is the plan being
// replaced (for /replan), RepoMap an optional file list.
type PlanInput struct {
	Task     string
	Previous string
	RepoMap  string
}

// Plan renders the planner's prompt.
func Plan(in PlanInput) string { return render("plan", in) }

// Execute renders the executor's prompt for the whole plan.
func Execute(plan string) string { return render("execute", struct{ Plan string }{plan}) }

// ContinueInput is one step of a bounded continue loop.
type ContinueInput struct {
	Plan     string
	Step     int
	MaxSteps int
	Previous string // the previous step's outcome ("" before step 1)
}

// ContinueStep renders the executor's prompt for one loop step.
func ContinueStep(in ContinueInput) string { return render("continue", in) }

// PlanCompleteMarker is the line with which the planner of a continue loop
// declares the plan complete: the last non-blank line of its answer,
// exactly (surrounding spaces aside), nothing after it.
const PlanCompleteMarker = "PLAN COMPLETE"

// ContinuePlanInput is the planner's half of a loop step: the plan as it
// was, and what the executor's half did to it.
type ContinuePlanInput struct {
	Plan         string
	Step         int
	MaxSteps     int
	Executor     string // the executor agent's name
	Answer       string // the executor's final answer
	ChangedFiles string // the paths the step changed, one a line
	Diff         string // the diff since the step began
	DiffNote     string // replaces "Diff of this step" when Diff is something else
}

// ContinuePlan renders the planner's prompt that updates plan.md after a
// loop step.
func ContinuePlan(in ContinuePlanInput) string { return render("continue-plan", in) }

// ParsePlanUpdate reads the planner's answer to ContinuePlan: the updated
// plan, and whether it declared the plan complete. The marker counts only
// as the last non-blank line, alone on it ("PLAN COMPLETE." or
// "**PLAN COMPLETE**" do not); it is not part of the plan. Anywhere else
// it is plan text like any other.
func ParsePlanUpdate(answer string) (plan string, complete bool) {
	lines := strings.Split(strings.ReplaceAll(answer, "\r\n", "\n"), "\n")
	end := len(lines)
	for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	if end > 0 && strings.TrimSpace(lines[end-1]) == PlanCompleteMarker {
		complete = true
		end--
	}
	return strings.TrimSpace(strings.Join(lines[:end], "\n")), complete
}

// ReviewInput is what the review prompt needs.
type ReviewInput struct {
	Plan         string
	ChangedFiles string
	Diff         string
}

// Review renders the reviewer's prompt.
func Review(in ReviewInput) string { return render("review", in) }

// HandoffInput is what the handoff prompt needs.
type HandoffInput struct {
	From    string
	To      string
	Handoff string // the content of handoff.md
}

// Handoff renders the prompt that launches the next agent with handoff.md.
func Handoff(in HandoffInput) string { return render("handoff", in) }

// AskInput is a free-text question to the active agent.
type AskInput struct {
	Question string
	Plan     string // optional context
	// PlanKnown (with Plan empty): the conversation already holds the
	// current plan; the prompt says so instead of sending it again.
	PlanKnown bool
}

// Ask renders a read-only question turn.
func Ask(in AskInput) string { return render("ask", in) }
