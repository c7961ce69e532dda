// Package panel is the room's context panel: the facts shown before each
// prompt (plan, budget, changed files, last run, orchestrator queue) and
// their two text forms, the one-line status and the boxed panel.
package panel

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/reports"
)

// MinWidth is the narrowest terminal that gets the boxed context
// panel; narrower terminals and pipes get the one-line status.
const MinWidth = 100

// Facts is the room's context at a glance: what the context panel and the
// one-line status show before each prompt.
type Facts struct {
	Active      string        `json:"activeAgent"`
	Mode        string        `json:"mode"` // "agents" or "orchestrator"
	Plan        bool          `json:"plan"`
	PlanAge     time.Duration `json:"planAgeNs,omitempty"`
	PlanMissing []string      `json:"planMissingSections,omitempty"` // the quality gate: required sections absent
	Diet        string        `json:"diet"`
	Ratio       float64       `json:"budgetRatio"`
	Changed     int           `json:"changedFiles"` // -1 when git could not say
	// GitAge is the age of the git facts (Changed, and the diff and repo
	// map in Ratio) when they are older than a refresh that is running;
	// GitPending: the first refresh is still running (Changed is -1).
	GitAge     time.Duration    `json:"gitFactsAgeNs,omitempty"`
	GitPending bool             `json:"gitPending,omitempty"`
	Last       *reports.LastRun `json:"lastRun,omitempty"`
	LastAgo    time.Duration    `json:"lastRunAgoNs,omitempty"`
	Target     string           `json:"target,omitempty"`
	QueueDepth int              `json:"queueDepth"`
	QueueAge   time.Duration    `json:"queueOldestNs,omitempty"`
	// SessionCostUSD is what this room session's runs cost (each run's
	// own cost, summed).
	SessionCostUSD float64 `json:"sessionCostUsd,omitempty"`
	// NeedsUser: the target waits for its user ("a permission prompt").
	NeedsUser string `json:"targetNeedsUser,omitempty"`
	// Pending is the executor run waiting in its worktree ("3 files
	// changed, not applied"; "" when none).
	Pending string `json:"pendingRun,omitempty"`
	// Held is another screen's agent run holding the repository ("claude
	// /ask, pid 4242, in relay-baton serve's page, started 3s ago"; ""
	// when none): no run starts here until it ends.
	Held string `json:"runHeld,omitempty"`
}

// painter colours panel text when enabled.
type painter bool

func (c painter) with(s string, attrs ...color.Attribute) string {
	if !c || s == "" {
		return s
	}
	col := color.New(attrs...)
	col.EnableColor()
	return col.Sprint(s)
}

func (p Facts) planCell(short bool) (text string, ok bool) {
	if !p.Plan {
		return "none", false
	}
	gate := "gate ok"
	if len(p.PlanMissing) > 0 {
		if short {
			gate = fmt.Sprintf("gate -%d", len(p.PlanMissing))
		} else {
			gate = "gate: lacks " + strings.Join(p.PlanMissing, ", ")
		}
	}
	if short {
		return render.Ago(p.PlanAge) + " " + gate, len(p.PlanMissing) == 0
	}
	return fmt.Sprintf("%s old, %s", render.Ago(p.PlanAge), gate), len(p.PlanMissing) == 0
}

func (p Facts) changedCell() string {
	switch {
	case p.GitPending:
		return "… changed"
	case p.Changed < 0:
		return "? changed"
	case p.GitAge > 0:
		return strconv.Itoa(p.Changed) + " changed " + render.Ago(p.GitAge) + " ago"
	}
	return strconv.Itoa(p.Changed) + " changed"
}

func (p Facts) lastCell(short bool) string {
	l := p.Last
	if l == nil {
		return "none"
	}
	state := "exit " + strconv.Itoa(l.ExitCode)
	if l.Cancelled {
		state = "cancelled"
	}
	s := fmt.Sprintf("%s /%s %s %s", l.Agent, l.Command, state, compactDur(l.Duration))
	if l.CostUSD > 0 {
		s += " " + render.Money(l.CostUSD)
	}
	if !short {
		s += ", " + render.Ago(p.LastAgo) + " ago"
		if p.SessionCostUSD > 0 {
			s += "; session " + render.Money(p.SessionCostUSD)
		}
	}
	return s
}

func (p Facts) orchCell(short bool) string {
	if p.Target == "" {
		return "none"
	}
	q := fmt.Sprintf("queue %d", p.QueueDepth)
	if short {
		q = fmt.Sprintf("q%d", p.QueueDepth)
	}
	if p.QueueDepth > 0 {
		q += ", oldest " + render.Ago(p.QueueAge)
	}
	if p.NeedsUser != "" {
		q += ", waiting for its user"
		if !short {
			q += " (" + p.NeedsUser + ")"
		}
	}
	return render.ShortID(p.Target) + " " + q
}

// compactDur is a duration to at most three significant figures.
func compactDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// Line is the compact one-line status, at most width-1 columns (so it
// never wraps, even on terminals that wrap at the last column). The most
// useful facts come first; those that do not fit are dropped whole and
// replaced by "…".
func (p Facts) Line(width int, useColor bool) string {
	c := painter(useColor)
	plan, ok := p.planCell(true)
	planAttr := color.FgGreen
	if !ok {
		planAttr = color.FgYellow
	}
	ratio, profile := fmt.Sprintf("%.2f", p.Ratio), ""
	if p.Diet != diet.Default { // the line names the diet only when it is not the default
		profile = " " + p.Diet
	}
	type part struct{ plain, colored string }
	parts := []part{
		{p.Active, c.with(p.Active, render.RoleColors[rolesByName(p.Active)], color.Bold)},
		{"plan " + plan, "plan " + c.with(plan, planAttr)},
		{p.changedCell(), p.changedCell()},
	}
	if p.Held != "" { // before the rest: nothing runs here meanwhile
		parts = append(parts[:1], append([]part{{"held by " + p.Held, "held by " + c.with(p.Held, color.FgYellow)}}, parts[1:]...)...)
	}
	if p.Pending != "" {
		parts = append(parts, part{"run " + p.Pending, "run " + c.with(p.Pending, color.FgYellow)})
	}
	parts = append(parts, []part{
		{"budget " + ratio + profile, "budget " + c.with(ratio, ratioAttr(p.Ratio)) + profile},
		{"last " + p.lastCell(true), "last " + p.lastCell(true)},
	}...)
	if p.Target != "" {
		parts = append(parts, part{"orch " + p.orchCell(true), "orch " + p.orchCell(true)})
	}
	const prefix, sep, more = "ctx ", " · ", " …"
	limit := max(width-1, 10)
	n := utf8.RuneCountInString(prefix)
	var colored []string
	for i, x := range parts {
		w := utf8.RuneCountInString(x.plain)
		if i > 0 {
			w += utf8.RuneCountInString(sep)
		}
		reserve := 0
		if i < len(parts)-1 {
			reserve = utf8.RuneCountInString(more)
		}
		if n+w+reserve > limit && !(i == len(parts)-1 && n+w <= limit) {
			if i == 0 { // not even the agent fits: cut
				return c.with(fit(prefix+x.plain, limit), color.Faint)
			}
			return c.with(prefix, color.Faint) + strings.Join(colored, c.with(sep, color.Faint)) + c.with(more, color.Faint)
		}
		n += w
		colored = append(colored, x.colored)
	}
	return c.with(prefix, color.Faint) + strings.Join(colored, c.with(sep, color.Faint))
}

func ratioAttr(r float64) color.Attribute {
	switch {
	case r >= diet.Ceiling:
		return color.FgRed
	case r >= 0.75:
		return color.FgYellow
	}
	return color.FgGreen
}

// fit cuts s to n runes, with an ellipsis when cut.
func fit(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// pad cuts or pads s to exactly n runes.
func pad(s string, n int) string {
	s = fit(s, n)
	return s + strings.Repeat(" ", n-utf8.RuneCountInString(s))
}

// Block is the boxed context panel for a terminal of width columns
// (MinWidth or more): every line is exactly min(width-1, 160) runes.
func (p Facts) Block(width int, useColor bool) []string {
	c := painter(useColor)
	w := min(width-1, 160)
	inner := w - 4 // "│ " + " │"
	plan, ok := p.planCell(false)
	planAttr := color.FgGreen
	if !ok {
		planAttr = color.FgYellow
	}
	mode := "agent room"
	if p.Mode == "orchestrator" {
		mode = "orchestrator lane"
	}
	type cell struct {
		label, value string
		attrs        []color.Attribute
	}
	cells := []cell{
		{"agent", p.Active + " (" + mode + ")", []color.Attribute{render.RoleColors[rolesByName(p.Active)], color.Bold}},
		{"plan", plan, []color.Attribute{planAttr}},
		{"budget", fmt.Sprintf("%.2f %s (stops at %.2f)", p.Ratio, p.Diet, diet.Ceiling), []color.Attribute{ratioAttr(p.Ratio)}},
		{"changed", p.filesCell(), nil},
		{"last run", p.lastCell(false), nil},
		{"orch", p.orchCell(false), nil},
	}
	// Two columns when each keeps room for its values; the left one (agent,
	// budget, last run) gets the larger share.
	const labelW = 9
	render := func(x cell, n int) string {
		v := fit(x.value, n-labelW)
		return c.with(pad(x.label, labelW), color.Faint) + c.with(v, x.attrs...) + strings.Repeat(" ", n-labelW-utf8.RuneCountInString(v))
	}
	var rows []string
	if inner >= 2*(labelW+28)+3 {
		left := (inner - 3) * 3 / 5
		right := inner - 3 - left
		for i := 0; i < len(cells); i += 2 {
			rows = append(rows, render(cells[i], left)+c.with(" │ ", color.Faint)+render(cells[i+1], right))
		}
	} else {
		for _, x := range cells {
			rows = append(rows, render(x, inner))
		}
	}
	if p.Held != "" {
		rows = append(rows, render(cell{"held by", p.Held, []color.Attribute{color.FgYellow}}, inner))
	}
	title := "─ context "
	out := []string{c.with("┌"+title+strings.Repeat("─", w-2-utf8.RuneCountInString(title))+"┐", color.Faint)}
	for _, r := range rows {
		out = append(out, c.with("│ ", color.Faint)+r+c.with(" │", color.Faint))
	}
	return append(out, c.with("└"+strings.Repeat("─", w-2)+"┘", color.Faint))
}

// filesCell is files(p.Changed), saying when git is still counting and
// how old a count being refreshed is.
func (p Facts) filesCell() string {
	if p.Pending != "" {
		return files(p.Changed) + " in your tree; run: " + p.Pending
	}
	switch {
	case p.GitPending:
		return "… (git status running)"
	case p.Changed >= 0 && p.GitAge > 0:
		return files(p.Changed) + ", " + render.Ago(p.GitAge) + " ago (refreshing)"
	}
	return files(p.Changed)
}

// files is "1 file", "3 files", or "?" when git could not say.
func files(n int) string {
	switch {
	case n < 0:
		return "? (git status failed)"
	case n == 1:
		return "1 file"
	}
	return strconv.Itoa(n) + " files"
}

// rolesByName maps an agent name to its role (the colour table's key).
func rolesByName(agent string) events.Role { return events.Role(agent) }
