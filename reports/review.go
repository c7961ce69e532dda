package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
)

// Review is the deterministic review.
type Review struct {
	Changed      []gitrepo.Change `json:"changed"`
	PlanSteps    []PlanStep       `json:"planSteps"`
	NotInPlan    []string         `json:"notInPlan"`
	Deletions    []string         `json:"deletions"`
	LargeDiffs   []string         `json:"largeDiffs"`
	Secrets      []string         `json:"likelySecrets"`
	TestsTouched []string         `json:"testsTouched"`
	Plan         bool             `json:"plan"`
	// PlanError says why plan.md cannot be read when it exists but is
	// not a plan.
	PlanError string `json:"planError,omitempty"`
}

// MarshalJSON writes empty lists as [] rather than null, so that
// `review --json | jq '.changed[]'` works on a clean tree.
func (r Review) MarshalJSON() ([]byte, error) {
	type plain Review
	p := plain(r)
	p.Changed = orEmpty(p.Changed)
	p.PlanSteps = make([]PlanStep, len(r.PlanSteps))
	for i, st := range r.PlanSteps {
		st.Files = orEmpty(st.Files)
		p.PlanSteps[i] = st
	}
	for _, l := range []*[]string{&p.NotInPlan, &p.Deletions, &p.LargeDiffs, &p.Secrets, &p.TestsTouched} {
		*l = orEmpty(*l)
	}
	return json.Marshal(p)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// PlanStep is one item of the plan's Steps section, with the changed
// files it names.
type PlanStep struct {
	Text  string   `json:"text"`
	Files []string `json:"changedFiles"`
}

// lazyRE compiles expr on first use: relay-baton's start-up (a hook run
// at every turn of a Claude Code session among them) compiles nothing it
// does not use.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// LargeDiffLines is the per-file changed-line count flagged as very large.
const LargeDiffLines = 400

var secretPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`AKIA[0-9A-Z]{16}`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),
		regexp.MustCompile(`\bxox[baprs]-[A-Za-z0-9-]{10,}`),
		regexp.MustCompile(`(?i)(?:api[_-]?key|secret|password|passwd|token)\s*[:=]\s*["'][^"'\s]{8,}["']`),
	}
})

var testPathRE = lazyRE(`(?i)(_test\.go$|\.test\.[jt]sx?$|\.spec\.[jt]sx?$|(^|/)tests?/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)__tests__/)`)

// planSteps extracts the list items of the plan's "Steps" section.
func planSteps(plan string) []string {
	var steps []string
	in := false
	for _, l := range strings.Split(plan, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(t, "#")), "Steps")
			continue
		}
		if !in {
			continue
		}
		if m := regexp.MustCompile(`^(?:\d+[.)]|[-*+])\s+(.*)$`).FindStringSubmatch(t); m != nil {
			steps = append(steps, m[1])
		}
	}
	return steps
}

// Plan is plan.md as the room read it.
type Plan struct {
	Text  string
	Ready bool   // plan.md is there and was read
	Error string // why plan.md exists but is not a plan ("" if it is, or is absent)
}

// NewReview compares the working tree's changes in root with the plan:
// which steps name changed files, changed files no step names, deletions,
// very large diffs, likely secrets in added lines, and tests touched. No
// model runs.
func NewReview(ctx context.Context, root string, p Plan) (Review, error) {
	var r Review
	ch, err := gitrepo.Changes(ctx, root)
	if err != nil {
		return r, err
	}
	r.Changed = ch
	plan := p.Text
	r.Plan, r.PlanError = p.Ready, p.Error
	steps := planSteps(plan)
	mentioned := map[string]bool{}
	for _, s := range steps {
		ps := PlanStep{Text: s, Files: []string{}}
		for _, c := range ch {
			if namesPath(s, c.Path) {
				ps.Files = append(ps.Files, c.Path)
				mentioned[c.Path] = true
			}
		}
		r.PlanSteps = append(r.PlanSteps, ps)
	}
	for _, c := range ch {
		if r.Plan && !mentioned[c.Path] && !namesPath(plan, c.Path) {
			r.NotInPlan = append(r.NotInPlan, c.Path)
		}
		if c.IsDeleted() {
			r.Deletions = append(r.Deletions, c.Path)
		}
		if c.Added+c.Deleted >= LargeDiffLines {
			r.LargeDiffs = append(r.LargeDiffs, fmt.Sprintf("%s (+%d -%d)", c.Path, c.Added, c.Deleted))
		}
		if testPathRE().MatchString(c.Path) {
			r.TestsTouched = append(r.TestsTouched, c.Path)
		}
	}
	// Added lines: the diff covers tracked changes and new files.
	file := ""
	for _, l := range strings.Split(gitrepo.Diff(ctx, root), "\n") {
		if strings.HasPrefix(l, "+++ b/") {
			file = strings.TrimPrefix(l, "+++ b/")
			continue
		}
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			r.Secrets = appendSecret(r.Secrets, file, l[1:])
		}
	}
	return r, nil
}

// pathTokenRE matches the words of a text that can be paths.
var pathTokenRE = lazyRE(`[\p{L}\p{N}_./\-]+`)

// namesPath reports whether text names the file at path (relative to the
// repository): a word of text is the path, its base name, or a tail of it
// that starts at a folder ("cmd/main.go" names "app/cmd/main.go"). A word
// that merely contains the name does not: "test_greet.py" does not name
// greet.py, nor "src/greet.py" a greet.py at the top.
func namesPath(text, path string) bool {
	path = strings.TrimPrefix(filepath.ToSlash(path), "./")
	for _, w := range pathTokenRE().FindAllString(text, -1) {
		w = strings.TrimPrefix(strings.TrimRight(w, ".-/"), "./")
		if w == "" {
			continue
		}
		if w == path || strings.HasSuffix(path, "/"+w) {
			return true
		}
	}
	return false
}

func appendSecret(list []string, file, line string) []string {
	for _, re := range secretPatterns() {
		if re.MatchString(line) {
			entry := file + ": " + re.String()
			for _, x := range list {
				if x == entry {
					return list
				}
			}
			return append(list, entry)
		}
	}
	return list
}

// SummaryLine is the review in one line, "review: 2 changed files, ...".
func (r Review) SummaryLine() string {
	return fmt.Sprintf("review: %s, %d not in plan, %s, %d very large, %s, %s touched",
		render.Count(len(r.Changed), "changed file"), len(r.NotInPlan), render.Count(len(r.Deletions), "deletion"), len(r.LargeDiffs), render.Count(len(r.Secrets), "likely secret"), render.Count(len(r.TestsTouched), "test"))
}

// Text renders the review; file names and plan text are shown inert.
func (r Review) Text() string {
	var b strings.Builder
	b.WriteString(r.SummaryLine() + "\n")
	if r.PlanError != "" {
		b.WriteString("plan.md unusable: changes are not compared with plan steps: " + render.InertLine(r.PlanError) + "\n")
	} else if !r.Plan {
		b.WriteString("no plan.md: changes are not compared with plan steps\n")
	}
	for i, s := range r.PlanSteps {
		mark := "·"
		if len(s.Files) > 0 {
			mark = "✓"
		}
		fmt.Fprintf(&b, "  %s step %d: %s", mark, i+1, render.InertLine(render.CutWords(s.Text, 160)))
		if len(s.Files) > 0 {
			fmt.Fprintf(&b, " [%s]", render.InertLine(strings.Join(s.Files, ", ")))
		}
		b.WriteString("\n")
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "  - %s\n", render.InertLine(it))
		}
	}
	list("changed but not named in the plan", r.NotInPlan)
	list("RISK deletions", r.Deletions)
	list(fmt.Sprintf("RISK very large diffs (>= %d lines)", LargeDiffLines), r.LargeDiffs)
	list("RISK likely secrets in added lines (pattern matched)", r.Secrets)
	if len(r.Changed) > 0 && len(r.TestsTouched) == 0 {
		b.WriteString("no tests touched\n")
	}
	list("tests touched", r.TestsTouched)
	return b.String()
}
