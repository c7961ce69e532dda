package room

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/gitrepo"
)

// Diet is a character budget profile for what relay-baton hands an agent.
type Diet struct {
	Handoff, Diff, RepoMap, LogTail, Plan int
}

// The profiles, as in the reference. Token estimates are chars/4.
var Diets = map[string]Diet{
	"lite":     {60000, 20000, 12000, 8000, 45000},
	"balanced": {40000, 12000, 8000, 5000, 30000},
	"caveman":  {25000, 6000, 4000, 2500, 18000},
	"ultra":    {12000, 2500, 2000, 1000, 9000},
	"off":      {200000, 100000, 50000, 50000, 150000},
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
		{Name: "plan.md", Chars: fileSize(filepath.Join(e.SessionDir, "plan.md")), Budget: d.Plan},
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
