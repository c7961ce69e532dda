package room

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// printer writes labelled lines and renders agent activity. One mutex
// orders lines written by the engine and by a runner's activity goroutine.
type printer struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	spinner bool

	// activity state of the current run
	agent     string
	inText    bool      // a text block is being printed (no newline yet)
	spinning  bool      // a pulse is on screen
	spinLen   int       // its width, to erase it with spaces (no escape codes)
	lastOut   time.Time // last time something was printed
	thinking  bool
	usage     *events.Usage
	stopSpin  chan struct{}
	spinDone  chan struct{}
	startedAt time.Time
}

func newPrinter(w io.Writer, useColor, spinner bool) *printer {
	return &printer{w: w, color: useColor, spinner: spinner}
}

var roleColors = map[events.Role]color.Attribute{
	events.RoleUser:         color.FgGreen,
	events.RoleClaude:       color.FgHiMagenta,
	events.RoleCodex:        color.FgCyan,
	events.RoleOrchestrator: color.FgYellow,
	events.RoleRelayBaton:   color.FgBlue,
}

func (p *printer) paint(attr color.Attribute, s string) string {
	if !p.color {
		return s
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(s)
}

func (p *printer) dim(s string) string {
	if !p.color {
		return s
	}
	c := color.New(color.Faint)
	c.EnableColor()
	return c.Sprint(s)
}

// label is "[role]" in the role's colour.
func (p *printer) label(r events.Role) string {
	name := string(r)
	if r == events.RoleUser {
		name = "you"
	}
	return p.paint(roleColors[r], "["+name+"]")
}

// PromptFor is the REPL prompt for an agent: "<agent>› ", coloured.
func PromptFor(agent string, useColor bool) string {
	p := printer{color: useColor}
	return p.paint(roleColors[events.Role(agent)], agent+"›") + " "
}

// clearLocked ends an open text line and erases the pulse.
func (p *printer) clearLocked() {
	if p.spinning {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.spinLen)+"\r")
		p.spinning = false
	}
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

func (p *printer) say(r events.Role, format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	msg := clean(fmt.Sprintf(format, a...)) // errors may quote agent output
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		fmt.Fprintf(p.w, "%s %s\n", p.label(r), line)
	}
	p.lastOut = time.Now()
}

// raw prints text as is (help tables, replay output).
func (p *printer) raw(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprint(p.w, s)
}

// beginRun starts rendering a run of agent.
func (p *printer) beginRun(agent string) {
	p.mu.Lock()
	p.agent, p.inText, p.thinking, p.usage = agent, false, false, nil
	p.startedAt, p.lastOut = time.Now(), time.Now()
	p.mu.Unlock()
	if p.spinner {
		p.stopSpin, p.spinDone = make(chan struct{}), make(chan struct{})
		go p.pulse(p.stopSpin, p.spinDone)
	}
}

// endRun stops the pulse and prints the one-line summary.
func (p *printer) endRun(res agents.Result) {
	if p.stopSpin != nil {
		close(p.stopSpin)
		<-p.spinDone
		p.stopSpin = nil
	}
	p.mu.Lock()
	p.clearLocked()
	u := p.usage
	if u == nil && (res.Usage != events.Usage{}) {
		u = &res.Usage
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
			parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
		}
		if u.InputTokens+u.OutputTokens > 0 {
			parts = append(parts, fmt.Sprintf("%d in / %d out tokens", u.InputTokens+u.CachedInputTokens, u.OutputTokens))
		}
	}
	line := p.agent + ": " + strings.Join(parts, " · ")
	if errors.Is(res.Err, agents.ErrNotLoggedIn) {
		// One line: what to run to log in (the CLI's own lines were held back).
		line = res.Err.Error() + " (" + strings.Join(parts, " · ") + ")"
	} else if res.Err != nil && !res.Cancelled {
		line += " · " + summary(res.Err.Error(), 200)
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
			if !p.inText && time.Since(p.lastOut) > 300*time.Millisecond {
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

// clean drops terminal control characters (escape sequences, bells,
// carriage returns) from agent-supplied text, keeping newlines and tabs: an
// agent's output must not be able to drive the user's terminal.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return -1
		}
		return r
	}, s)
}

// activity renders one activity of the current run.
func (p *printer) activity(a events.Activity) {
	a.Text, a.Tool, a.Detail = clean(a.Text), clean(a.Tool), clean(a.Detail)
	p.mu.Lock()
	defer p.mu.Unlock()
	role := events.Role(p.agent)
	switch a.Kind {
	case events.ActThinking:
		if !p.thinking && !p.spinner {
			p.clearLocked()
			fmt.Fprintf(p.w, "%s %s\n", p.label(role), p.dim("… thinking"))
		}
		p.thinking = true
		return
	case events.ActText:
		if a.Text == "" {
			return
		}
		if p.spinning {
			fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.spinLen)+"\r")
			p.spinning = false
		}
		text := a.Text
		if !p.inText {
			fmt.Fprintf(p.w, "%s ", p.label(role))
			text = strings.TrimLeft(text, "\n")
		}
		fmt.Fprint(p.w, text)
		// Text ending in a newline closes the block: the next text is labelled.
		p.inText = !strings.HasSuffix(text, "\n")
	case events.ActTool:
		p.clearLocked()
		d := a.Detail
		if d != "" {
			d = ": " + d
		}
		fmt.Fprintf(p.w, "%s %s\n", p.label(role), p.dim("⚙ "+a.Tool+summary(d, 160)))
	case events.ActToolResult:
		if a.IsError {
			p.clearLocked()
			code := ""
			if a.ExitCode != nil {
				code = fmt.Sprintf(" (exit %d)", *a.ExitCode)
			}
			fmt.Fprintf(p.w, "%s %s\n", p.label(role), p.dim("  ✗ tool failed"+code))
		}
	case events.ActUsage:
		if a.Usage != nil {
			u := *a.Usage
			p.usage = &u
		}
		return
	case events.ActError:
		p.clearLocked()
		fmt.Fprintf(p.w, "%s error: %s\n", p.label(role), summary(a.Text, 400))
	case events.ActRaw:
		if strings.TrimSpace(a.Text) == "" {
			return
		}
		p.clearLocked()
		fmt.Fprintf(p.w, "%s %s\n", p.label(role), p.dim(summary(a.Text, 400)))
	default:
		return
	}
	p.thinking = false
	p.lastOut = time.Now()
}
