// Package reports holds the room's reports: doctor's checks of the
// environment, /status's account of the session and the deterministic
// review of the working tree against plan.md. The room gathers what only
// it knows (its agent runner, its last run, its plan) and hands it over as
// plain data; each report renders itself as text (repository text shown
// inert) and as JSON.
package reports

import (
	"fmt"
	"strings"

	"github.com/fatih/color"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events/render"
)

// Status is how a check came out.
type Status string

// The statuses of a check.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip" // not applicable here (no repository)
)

// Check is one line of doctor's report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Doctor is what doctor / /diagnose shows.
type Doctor struct {
	Deep   bool    `json:"deep"`
	Checks []Check `json:"checks"`
	// providerKey is codex's provider's key variable, when it reads one
	// (the api keys check names it).
	providerKey *agents.ProviderKey
}

// add appends one check.
func (r *Doctor) add(name string, status Status, detail string) {
	r.Checks = append(r.Checks, Check{Name: name, Status: status, Detail: detail})
}

// Failed reports whether any check failed.
func (r Doctor) Failed() bool {
	fails, _ := r.Tally()
	return fails > 0
}

// Tally counts the failed checks and the warnings.
func (r Doctor) Tally() (fails, warns int) {
	for _, c := range r.Checks {
		switch c.Status {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	return fails, warns
}

// Text renders the report without colour.
func (r Doctor) Text() string { return r.Render(false) }

// statusColors colour doctor's status words.
var statusColors = map[Status]color.Attribute{OK: color.FgGreen, Warn: color.FgYellow, Fail: color.FgRed}

// Render renders the report, its status words coloured when useColor.
func (r Doctor) Render(useColor bool) string { return r.RenderWidth(useColor, 0) }

// RenderWidth is Render with each check's detail wrapped between words at
// width columns (render.Wrap), under the detail column; 0 keeps each check
// on one line (a pipe).
func (r Doctor) RenderWidth(useColor bool, width int) string {
	var b strings.Builder
	for _, c := range r.Checks {
		st := fmt.Sprintf("%-4s", c.Status)
		name, detail := render.InertLine(c.Name), render.InertLine(c.Detail)
		head := fmt.Sprintf("%s %-22s", st, name)
		line := head + " " + detail + "\n"
		if width > 0 {
			line = render.Wrap(head, detail, len(head)+1, width)
		}
		if a, ok := statusColors[c.Status]; ok && useColor {
			k := color.New(a, color.Bold)
			k.EnableColor()
			line = k.Sprint(st) + strings.TrimPrefix(line, st)
		}
		b.WriteString(line)
	}
	return b.String()
}
