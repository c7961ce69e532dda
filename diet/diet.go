// Package diet holds the character budget profiles for what relay-baton
// hands an agent, and the budget report measured against them.
package diet

import (
	"fmt"
	"strings"
)

// Profile is a character budget profile for what relay-baton hands an agent.
type Profile struct {
	Handoff int // the whole handoff document
	Diff    int // the diff shown to an agent
	RepoMap int // the repository map (and half of it for the relevant files)
	LogTail int // the tail of commands.log (the agents' raw output)
	Plan    int // the plan
}

// The profiles, in characters. Token estimates are chars/4.
var Profiles = map[string]Profile{
	"lite":     {Handoff: 60000, Diff: 20000, RepoMap: 12000, LogTail: 8000, Plan: 45000},
	"balanced": {Handoff: 40000, Diff: 12000, RepoMap: 8000, LogTail: 5000, Plan: 30000},
	"caveman":  {Handoff: 25000, Diff: 6000, RepoMap: 4000, LogTail: 2500, Plan: 18000},
	"ultra":    {Handoff: 12000, Diff: 2500, RepoMap: 2000, LogTail: 1000, Plan: 9000},
	"off":      {Handoff: 200000, Diff: 100000, RepoMap: 50000, LogTail: 50000, Plan: 150000},
}

// Names lists the profiles from largest to smallest budget.
var Names = []string{"off", "lite", "balanced", "caveman", "ultra"}

// Default is the profile used unless one is chosen.
const Default = "balanced"

// Ceiling is the ratio at or over which /continue stops.
const Ceiling = 0.95

// Part is one component of the context budget.
type Part struct {
	Name   string  `json:"name"`
	Chars  int     `json:"chars"`
	Budget int     `json:"budget"`
	Ratio  float64 `json:"ratio"`
}

// Report is what /budget shows.
type Report struct {
	Diet      string   `json:"diet"`
	Parts     []Part   `json:"parts"`
	Total     int      `json:"totalChars"`
	Handoff   int      `json:"handoffBudget"`
	Ratio     float64  `json:"ratio"` // Total / Handoff budget
	Tokens    int      `json:"estimatedTokens"`
	Ceiling   float64  `json:"ceiling"`
	OverParts []string `json:"overBudget,omitempty"`
}

// Text renders the report.
func (r Report) Text() string {
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
