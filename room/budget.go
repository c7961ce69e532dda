package room

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/gitrepo"
)

// Diet is a character budget profile for what relay-baton hands an agent.
type Diet struct {
	Handoff int // the whole handoff document
	Diff    int // the diff shown to an agent
	RepoMap int // the repository map (and half of it for the relevant files)
	LogTail int // the tail of commands.log (the agents' raw output)
	Plan    int // the plan
}

// The profiles, in characters. Token estimates are chars/4.
var Diets = map[string]Diet{
	"lite":     {Handoff: 60000, Diff: 20000, RepoMap: 12000, LogTail: 8000, Plan: 45000},
	"balanced": {Handoff: 40000, Diff: 12000, RepoMap: 8000, LogTail: 5000, Plan: 30000},
	"caveman":  {Handoff: 25000, Diff: 6000, RepoMap: 4000, LogTail: 2500, Plan: 18000},
	"ultra":    {Handoff: 12000, Diff: 2500, RepoMap: 2000, LogTail: 1000, Plan: 9000},
	"off":      {Handoff: 200000, Diff: 100000, RepoMap: 50000, LogTail: 50000, Plan: 150000},
}

// DietNames lists the profiles from largest to smallest budget.
var DietNames = []string{"off", "lite", "balanced", "caveman", "ultra"}

// DefaultDiet is the profile used unless one is chosen.
const DefaultDiet = "balanced"

// BudgetCeiling is the ratio at or over which /continue stops.
const BudgetCeiling = 0.95

// BudgetPart is one component of the context budget.
type BudgetPart struct {
	Name   string  `json:"name"`
	Chars  int     `json:"chars"`
	Budget int     `json:"budget"`
	Ratio  float64 `json:"ratio"`
}

// BudgetReport is what /budget shows.
type BudgetReport struct {
	Diet      string       `json:"diet"`
	Parts     []BudgetPart `json:"parts"`
	Total     int          `json:"totalChars"`
	Handoff   int          `json:"handoffBudget"`
	Ratio     float64      `json:"ratio"` // Total / Handoff budget
	Tokens    int          `json:"estimatedTokens"`
	Ceiling   float64      `json:"ceiling"`
	OverParts []string     `json:"overBudget,omitempty"`
}

func fileSize(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// Budget measures the raw sizes of what a handoff would carry against the
// diet profile's budgets.
func (e *Engine) Budget(ctx context.Context) BudgetReport {
	return e.budgetOf(len(gitrepo.Diff(ctx, e.Root)), len(gitrepo.Map(ctx, e.Root)))
}

// budgetOf is Budget for a diff and a repo map of the given sizes (the
// context panel's come from its cached git facts).
func (e *Engine) budgetOf(diff, repoMapChars int) BudgetReport {
	d := Diets[e.Diet]
	parts := []BudgetPart{
		{Name: events.PlanFile, Chars: fileSize(filepath.Join(e.SessionDir, events.PlanFile)), Budget: d.Plan},
		{Name: "diff", Chars: diff, Budget: d.Diff},
		{Name: "repo map", Chars: repoMapChars, Budget: d.RepoMap},
		// Only the log's tail goes into a handoff: the whole file is not context.
		{Name: "commands.log tail", Chars: min(fileSize(filepath.Join(e.SessionDir, "commands.log")), d.LogTail), Budget: d.LogTail},
	}
	r := BudgetReport{Diet: e.Diet, Handoff: d.Handoff, Ceiling: BudgetCeiling}
	for i := range parts {
		parts[i].Ratio = float64(parts[i].Chars) / float64(parts[i].Budget)
		r.Total += parts[i].Chars
		if parts[i].Ratio > 1 {
			r.OverParts = append(r.OverParts, parts[i].Name)
		}
	}
	r.Parts = parts
	r.Ratio = float64(r.Total) / float64(d.Handoff)
	r.Tokens = r.Total / 4
	return r
}

// Text renders the report.
func (r BudgetReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "diet %s: %d chars (~%d tokens) of a %d-char handoff budget, ratio %.2f (ceiling %.2f)\n", r.Diet, r.Total, r.Tokens, r.Handoff, r.Ratio, r.Ceiling)
	for _, p := range r.Parts {
		fmt.Fprintf(&b, "  %-17s %8d / %-7d %5.0f%%\n", p.Name, p.Chars, p.Budget, p.Ratio*100)
	}
	if len(r.OverParts) > 0 {
		fmt.Fprintf(&b, "over budget (truncated in a handoff): %s\n", strings.Join(r.OverParts, ", "))
	}
	return b.String()
}
