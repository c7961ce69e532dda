package room

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/fatih/color"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/workspace"
)

// PanelMinWidth is the narrowest terminal that gets the boxed context
// panel; narrower terminals and pipes get the one-line status.
const PanelMinWidth = 100

// Panel is the room's context at a glance: what the context panel and the
// one-line status show before each prompt.
type Panel struct {
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
}

// orchestratorTarget is the orchestrator session the room talks to, ""
// when none.
func (e *Engine) orchestratorTarget() string {
	if e.chat.session != "" {
		return e.chat.session
	}
	return e.cont.target
}

// Panel gathers the context panel's facts: plan.md, the queue, and the
// git facts (changed files, diff and repo map sizes) from e.repo, which
// refreshes them in the background when they are out of date: a prompt
// does not wait for a walk of a large repository (see repoCache.get).
// Nothing is logged.
func (e *Engine) Panel(ctx context.Context) Panel {
	p := Panel{Active: e.Active, Mode: "agents", Diet: e.Diet, Last: e.last, Changed: -1, SessionCostUSD: e.spent.Usage.CostUSD}
	if e.Active == "orchestrator" {
		p.Mode = "orchestrator"
	}
	if age, ok := e.planAge(); ok {
		p.Plan, p.PlanAge = true, age
		if text, err := e.readPlan(); err == nil {
			p.PlanMissing = missingSections(text)
		}
	}
	if e.repo == nil {
		e.repo = newRepoCache(e.Root) // an engine not made by New: a cache of its own
	}
	f, pending, fresh := e.repo.get(ctx, e.last)
	p.Changed, p.GitPending = f.changed, pending
	if pending {
		p.Changed = -1
	} else if !fresh {
		p.GitAge = max(time.Since(f.at), time.Millisecond)
	}
	p.Ratio = e.budgetOf(f.diffChars, f.mapChars).Ratio
	if p.Last != nil {
		p.LastAgo = max(0, e.now().Sub(p.Last.At))
	}
	if t := e.orchestratorTarget(); t != "" {
		p.Target = t
		ws, err := workspace.Resolve(e.Root)
		if err != nil {
			ws = e.Root
		}
		if s, err := conversation.OpenSession(ws, t); err == nil {
			if q, err := s.Queue(); err == nil {
				p.QueueDepth, p.QueueAge = q.Depth, q.Age(e.now())
			}
			if a, ok := s.NeedsUser(conversation.LocateTranscript(s)); ok {
				p.NeedsUser = a.What()
			}
		}
	}
	return p
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

func (p Panel) planCell(short bool) (text string, ok bool) {
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
		return ago(p.PlanAge) + " " + gate, len(p.PlanMissing) == 0
	}
	return fmt.Sprintf("%s old, %s", ago(p.PlanAge), gate), len(p.PlanMissing) == 0
}

func (p Panel) changedCell() string {
	switch {
	case p.GitPending:
		return "… changed"
	case p.Changed < 0:
		return "? changed"
	case p.GitAge > 0:
		return strconv.Itoa(p.Changed) + " changed " + ago(p.GitAge) + " ago"
	}
	return strconv.Itoa(p.Changed) + " changed"
}

func (p Panel) lastCell(short bool) string {
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
		s += " " + money(l.CostUSD)
	}
	if !short {
		s += ", " + ago(p.LastAgo) + " ago"
		if p.SessionCostUSD > 0 {
			s += "; session " + money(p.SessionCostUSD)
		}
	}
	return s
}

func (p Panel) orchCell(short bool) string {
	if p.Target == "" {
		return "none"
	}
	q := fmt.Sprintf("queue %d", p.QueueDepth)
	if short {
		q = fmt.Sprintf("q%d", p.QueueDepth)
	}
	if p.QueueDepth > 0 {
		q += ", oldest " + ago(p.QueueAge)
	}
	if p.NeedsUser != "" {
		q += ", waiting for its user"
		if !short {
			q += " (" + p.NeedsUser + ")"
		}
	}
	return shortID(p.Target) + " " + q
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
func (p Panel) Line(width int, useColor bool) string {
	c := painter(useColor)
	plan, ok := p.planCell(true)
	planAttr := color.FgGreen
	if !ok {
		planAttr = color.FgYellow
	}
	ratio, diet := fmt.Sprintf("%.2f", p.Ratio), ""
	if p.Diet != DefaultDiet { // the line names the diet only when it is not the default
		diet = " " + p.Diet
	}
	type part struct{ plain, colored string }
	parts := []part{
		{p.Active, c.with(p.Active, roleColors[rolesByName(p.Active)], color.Bold)},
		{"plan " + plan, "plan " + c.with(plan, planAttr)},
		{p.changedCell(), p.changedCell()},
		{"budget " + ratio + diet, "budget " + c.with(ratio, ratioAttr(p.Ratio)) + diet},
		{"last " + p.lastCell(true), "last " + p.lastCell(true)},
	}
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
	case r >= BudgetCeiling:
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
// (PanelMinWidth or more): every line is exactly min(width-1, 160) runes.
func (p Panel) Block(width int, useColor bool) []string {
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
		{"agent", p.Active + " (" + mode + ")", []color.Attribute{roleColors[rolesByName(p.Active)], color.Bold}},
		{"plan", plan, []color.Attribute{planAttr}},
		{"budget", fmt.Sprintf("%.2f %s (stops at %.2f)", p.Ratio, p.Diet, BudgetCeiling), []color.Attribute{ratioAttr(p.Ratio)}},
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
	title := "─ context "
	out := []string{c.with("┌"+title+strings.Repeat("─", w-2-utf8.RuneCountInString(title))+"┐", color.Faint)}
	for _, r := range rows {
		out = append(out, c.with("│ ", color.Faint)+r+c.with(" │", color.Faint))
	}
	return append(out, c.with("└"+strings.Repeat("─", w-2)+"┘", color.Faint))
}

// filesCell is files(p.Changed), saying when git is still counting and
// how old a count being refreshed is.
func (p Panel) filesCell() string {
	switch {
	case p.GitPending:
		return "… (git status running)"
	case p.Changed >= 0 && p.GitAge > 0:
		return files(p.Changed) + ", " + ago(p.GitAge) + " ago (refreshing)"
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

// termWidth is the REPL terminal's width: the input terminal's size when
// it is one, else $COLUMNS, else 80.
func termWidth(o REPLOptions) int {
	if f, ok := o.In.(*os.File); ok && o.Terminal {
		if w, _, err := readline.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// panelText is the one-line status printed before a prompt (narrow
// terminals, pipes, terminals too short to pin the panel).
func (e *Engine) panelText(ctx context.Context, o REPLOptions) string {
	return e.Panel(ctx).Line(termWidth(o), o.Color) + "\n"
}

// startPanel shows the context for the prompt about to be read. Without a
// terminal the one-line status is printed at once, before the prompt. On a
// terminal the facts are gathered in the background while readline already
// reads (so keys typed meanwhile are not lost), then drawn in the pinned
// region (pin, when the terminal is wide and tall enough) or written as the
// one-line status through readline's writer, which redraws the prompt and
// the line being edited below it. The returned stop must be called when
// Readline returns: after it nothing more is written.
func (e *Engine) startPanel(ctx context.Context, o REPLOptions, w io.Writer, pin *pinnedPanel) (stop func()) {
	if !o.Terminal {
		e.out.raw(e.panelText(ctx, o))
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var mu sync.Mutex
	stale := false
	go func() {
		defer close(done)
		p := e.Panel(pctx)
		mu.Lock()
		if stale || pctx.Err() != nil {
			mu.Unlock()
			return
		}
		if pin == nil || !pin.Draw(p) {
			e.out.mu.Lock()
			io.WriteString(w, p.Line(termWidth(o), o.Color)+"\n")
			e.out.mu.Unlock()
			mu.Unlock()
			return
		}
		mu.Unlock()
		// The pinned panel follows the repository while the prompt waits:
		// a refresh of the git facts that was running ends, files change.
		t := time.NewTicker(PanelRefresh)
		defer t.Stop()
		last := strings.Join(p.Block(PanelMinWidth, false), "\n")
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
			p := e.Panel(pctx)
			now := strings.Join(p.Block(PanelMinWidth, false), "\n")
			mu.Lock()
			if !stale && pctx.Err() == nil && now != last {
				pin.Draw(p)
				last = now
			}
			mu.Unlock()
		}
	}()
	return func() {
		mu.Lock()
		stale = true
		mu.Unlock()
		cancel()
		<-done
	}
}

// PanelRefresh is how often the pinned panel's facts are gathered again
// while the prompt waits (it is redrawn when they changed).
const PanelRefresh = 2 * time.Second

// termWriter serializes writes to the terminal: readline's redraws, the
// room's lines and the pinned panel's draws each reach it whole.
//
// The line editor erases "to the end of the screen" (ESC[J) whenever it
// redraws its line (an empty Enter, Ctrl-C, a completion, a resize), and
// that erase is not bounded by the scroll region: it wipes the pinned
// panel's rows too. So a write holding ESC[J is followed, in the same
// locked write, by the panel's repaint (pin.repaint), which never waits
// for the panel's own lock.
type termWriter struct {
	mu  sync.Mutex
	w   io.Writer
	pin *pinnedPanel // nil when no panel is pinned
}

// eraseDown is ED 0, erase from the cursor to the end of the screen.
const eraseDown = "\x1b[J"

func (l *termWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(b)
	if err == nil && l.pin != nil && bytes.Contains(b, []byte(eraseDown)) {
		if p := l.pin.repaint.Load(); p != nil {
			_, err = io.WriteString(l.w, *p)
		}
	}
	return n, err
}

// pinnedPanel keeps the boxed context panel in the bottom rows of the
// terminal: a scroll region (DECSTBM) holds everything else above it, so
// the conversation scrolls (and goes into the scrollback) while the panel
// is redrawn in place, never printed into the scrollback. A terminal
// narrower than PanelMinWidth, or too short, gets no pinned panel (the
// REPL prints the one-line status instead).
type pinnedPanel struct {
	w     io.Writer
	size  func() (cols, rows int, ok bool)
	color bool

	mu     sync.Mutex
	height int // rows reserved at the bottom; 0 when not pinned
	rows   int // the terminal's rows when the region was set
	last   *Panel
	// repaint redraws the panel's rows in place and puts the cursor
	// back (DECSC ... DECRC); nil when not pinned. termWriter writes it
	// after anything that erased below the cursor.
	repaint atomic.Pointer[string]
}

// pinnedMinRows is how many rows the conversation keeps above the panel.
const pinnedMinRows = 10

// Draw shows p in the bottom rows (reserving them the first time) and
// reports whether it could: false on a narrow or short terminal.
func (pp *pinnedPanel) Draw(p Panel) bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.last = &p
	return pp.drawLocked(false)
}

// Resize re-reserves the rows for a new terminal size and redraws. A
// terminal that reflows its lines on a resize (tmux, VTE, kitty, iTerm2)
// has moved the old panel's rows, wrapped, to where nobody can compute
// them; but they are all below the line the cursor is on (the prompt's,
// or a run's last line), so the region is reset and everything below that
// line's start (atLineStart: the line is readline's, redrawn by it) or
// the cursor is erased, and the panel is pinned again from scratch. The
// caller then has readline redraw its line (which it does not do on its
// own on a resize).
func (pp *pinnedPanel) Resize(atLineStart bool) bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.last == nil {
		return false
	}
	if pp.height > 0 {
		erase := "\x1b[J"
		if atLineStart {
			erase = "\r\x1b[J"
		}
		io.WriteString(pp.w, "\x1b7\x1b[r\x1b8"+erase)
		pp.height = 0
		pp.repaint.Store(nil)
	}
	return pp.drawLocked(false)
}

func (pp *pinnedPanel) drawLocked(resized bool) bool {
	cols, rows, ok := pp.size()
	if !ok || cols < PanelMinWidth {
		pp.unpinLocked()
		return false
	}
	lines := pp.last.Block(cols, pp.color)
	h := len(lines)
	if rows < h+pinnedMinRows {
		pp.unpinLocked()
		return false
	}
	var b strings.Builder
	restore := "\x1b8" // DECRC: back where the cursor was
	switch {
	case pp.height == 0:
		// Make room: scroll the screen up by h rows, keep the cursor's
		// place (DECSC), then fence the bottom rows off (DECSTBM).
		b.WriteString(strings.Repeat("\n", h))
		fmt.Fprintf(&b, "\x1b[%dA\x1b7\x1b[1;%dr", h, rows-h)
	case resized || pp.height != h || pp.rows != rows:
		// A new size: the old place of the cursor means nothing now; it
		// goes to the region's last row, where readline redraws its line.
		fmt.Fprintf(&b, "\x1b[1;%dr", rows-h)
		fmt.Fprintf(&b, "\x1b[%d;1H\x1b[J", max(1, rows-max(h, pp.height)+1))
		restore = fmt.Sprintf("\x1b[%d;1H", rows-h)
	default:
		b.WriteString("\x1b7")
	}
	var rp strings.Builder
	rp.WriteString("\x1b7")
	for i, l := range lines {
		fmt.Fprintf(&rp, "\x1b[%d;1H\x1b[2K%s", rows-h+1+i, l)
	}
	rp.WriteString("\x1b8")
	paint := rp.String()
	b.WriteString(strings.TrimSuffix(strings.TrimPrefix(paint, "\x1b7"), "\x1b8"))
	b.WriteString(restore)
	pp.height, pp.rows = h, rows
	pp.repaint.Store(&paint)
	io.WriteString(pp.w, b.String())
	return true
}

// unpinLocked gives the rows back: the region reset, the panel erased.
func (pp *pinnedPanel) unpinLocked() {
	if pp.height == 0 {
		return
	}
	pp.repaint.Store(nil)
	fmt.Fprintf(pp.w, "\x1b7\x1b[r\x1b[%d;1H\x1b[J\x1b8", max(1, pp.rows-pp.height+1))
	pp.height = 0
}

// Close unpins the panel (the room is leaving).
func (pp *pinnedPanel) Close() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.unpinLocked()
}

// Reapply sets the region again after a program (an editor) had the
// terminal, which may have reset it.
func (pp *pinnedPanel) Reapply() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.height == 0 || pp.last == nil {
		return
	}
	pp.height = 0 // reserve again: the editor may have cleared the screen
	pp.drawLocked(false)
}

// Pinned reports whether the panel holds the bottom rows.
func (pp *pinnedPanel) Pinned() bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.height > 0
}
