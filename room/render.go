package room

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// printer writes labelled lines and renders agent activity through the
// one terminal renderer (events/render), adding the room's own parts: the
// thinking pulse and the run summary. One mutex orders lines written by the
// engine and by a runner's activity goroutine.
type printer struct {
	mu      sync.Mutex
	w       io.Writer
	r       *render.Terminal
	color   bool
	spinner bool

	// activity state of the current run
	agent     string
	spinning  bool      // a pulse is on screen
	spinLen   int       // its width, to erase it with spaces (no escape codes)
	lastOut   time.Time // last time something was printed
	usage     *events.Usage
	lastText  bool // the last activity shown was a text block
	stopSpin  chan struct{}
	spinDone  chan struct{}
	startedAt time.Time
	width     func() int // the terminal's columns (setWidth); nil: no wrapping
}

func newPrinter(w io.Writer, useColor, spinner bool) *printer {
	r := render.NewTerminal(w, useColor)
	r.SetMarkdown(true) // replies rendered when colour is on; raw without
	return &printer{w: w, r: r, color: useColor, spinner: spinner}
}

// clearLocked ends an open text line and erases the pulse.
func (p *printer) clearLocked() {
	p.erasePulseLocked()
	p.r.EndLine()
}

// erasePulseLocked erases the pulse, if one is drawn.
func (p *printer) erasePulseLocked() {
	if p.spinning {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.spinLen)+"\r")
		p.spinning = false
	}
}

func (p *printer) say(r events.Role, format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erasePulseLocked()
	p.r.Lines(r, fmt.Sprintf(format, a...)) // sanitized: errors may quote agent output
	p.lastOut = time.Now()
}

// raw prints text as is (help tables, replay output).
func (p *printer) raw(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprint(p.w, p.r.Wrap(s))
}

// beginRun starts rendering a run of agent.
func (p *printer) beginRun(agent string) {
	p.mu.Lock()
	p.agent, p.usage, p.lastText = agent, nil, false
	p.r.EndLine()
	p.startedAt, p.lastOut = time.Now(), time.Now()
	p.mu.Unlock()
	if p.spinner {
		p.stopSpin, p.spinDone = make(chan struct{}), make(chan struct{})
		go p.pulse(p.stopSpin, p.spinDone)
	}
}

// endRun stops the pulse and prints the one-line summary.
// own is the run's own usage (costs.go), shown instead of what the CLI
// reported when it reported any.
func (p *printer) endRun(res agents.Result, own events.Usage) {
	p.stopSpinner()
	p.mu.Lock()
	p.clearLocked()
	u := p.usage
	if res.Usage != (events.Usage{}) {
		u = &own
	}
	p.mu.Unlock()
	parts := []string{}
	switch {
	case res.Cancelled:
		parts = append(parts, "cancelled")
	case res.TimedOut:
		parts = append(parts, "timed out")
	default:
		parts = append(parts, fmt.Sprintf("exit %d", res.ExitCode))
	}
	parts = append(parts, res.Duration.Round(time.Millisecond).String())
	if u != nil {
		if u.CostUSD > 0 {
			parts = append(parts, render.Money(u.CostUSD))
		}
		if u.InputTokens+u.OutputTokens > 0 {
			parts = append(parts, fmt.Sprintf("%d in / %d out tokens", u.InputTokens+u.CachedInputTokens, u.OutputTokens))
		}
	}
	line := p.agent + ": " + strings.Join(parts, " · ")
	var me *agents.MissingEnvError
	if errors.Is(res.Err, agents.ErrNotLoggedIn) || errors.As(res.Err, &me) {
		// One line: what to run to log in (the CLI's own lines were held
		// back), or which variable to pass and how.
		line = res.Err.Error() + " (" + strings.Join(parts, " · ") + ")"
	} else if res.Err != nil && !res.Cancelled {
		line += " · " + render.Cut(res.Err.Error(), 200)
	}
	p.say(events.RoleRelayBaton, "%s", line)
}

var pulseFrames = []string{"·  ", "·· ", "···", " ··", "  ·", "   "}

func (p *printer) pulse(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(150 * time.Millisecond)
	defer t.Stop()
	i := 0
	for {
		select {
		case <-stop:
			p.mu.Lock()
			p.clearLocked()
			p.mu.Unlock()
			return
		case <-t.C:
			p.mu.Lock()
			if !p.r.Open() && time.Since(p.lastOut) > 300*time.Millisecond {
				s := fmt.Sprintf("%s %s thinking %ds", pulseFrames[i%len(pulseFrames)], p.agent, int(time.Since(p.startedAt).Seconds()))
				fmt.Fprint(p.w, "\r"+s)
				if len(s) < p.spinLen {
					fmt.Fprint(p.w, strings.Repeat(" ", p.spinLen-len(s)))
				}
				p.spinLen = max(p.spinLen, len(s))
				p.spinning = true
				i++
			}
			p.mu.Unlock()
		}
	}
}

// activity renders one activity of the current run. The room shows no
// "end of turn" line (endRun's summary says how the run ended) and, with
// the pulse on, no thinking line.
func (p *printer) activity(a events.Activity) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch a.Kind {
	case events.ActUsage:
		if a.Usage != nil {
			u := *a.Usage
			p.usage = &u
		}
		return
	case events.ActDone:
		return
	case events.ActThinking:
		if p.spinner {
			return
		}
	}
	p.erasePulseLocked()
	// Every text activity is a whole block (claude's content blocks,
	// codex's agent messages, a transcript's lines): the next one starts
	// a line of its own, as the agents' own screens show them.
	if a.Kind == events.ActText && p.lastText {
		if p.r.EndLine() {
			a.Text = strings.TrimLeft(a.Text, "\n")
		}
	}
	if rw, ok := p.w.(replyWriter); ok && a.Kind == events.ActText {
		if strings.TrimSpace(a.Text) == "" {
			return
		}
		p.r.EndLine()
		rw.WriteReply(p.agent, a.Text)
		p.lastOut, p.lastText = time.Now(), true
		return
	}
	if p.r.Activity(events.Role(p.agent), a) {
		p.lastOut = time.Now()
		p.lastText = a.Kind == events.ActText
	}
}

// replyWriter is a frontend's writer that shows an agent's reply text
// itself (the page renders it as Markdown, safely): the printer hands it
// each text block whole, with the agent that wrote it.
type replyWriter interface {
	WriteReply(agent, text string)
}

// setWidth has lines wrapped at words to the terminal's width, the gutter
// on every row.
func (p *printer) setWidth(width func() int) {
	p.mu.Lock()
	p.r.SetWidth(width)
	p.width = width
	p.mu.Unlock()
}

// label is "[role]" in the role's colour (the renderer's gutter).
func (p *printer) label(r events.Role) string { return p.r.Label(r) }

// dim returns s faint when the printer colours.
func (p *printer) dim(s string) string { return render.NewTerminal(nil, p.color).Dim(s) }

// clean is render.Inert: text with every control character shown visibly
// (clean(s) == s says s holds none).
func clean(s string) string { return render.Inert(s) }

// stopSpinner stops the spinner of a run, if one turns, and waits for it.
func (p *printer) stopSpinner() {
	if p.stopSpin != nil {
		close(p.stopSpin)
		<-p.spinDone
		p.stopSpin = nil
	}
}

// endPulse stops the pulse of a run begun with beginRun and ends an open
// text line.
func (p *printer) endPulse() {
	p.stopSpinner()
	p.mu.Lock()
	p.clearLocked()
	p.mu.Unlock()
}
