package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/relay-baton/relay-baton/events"
)

// RoleColors is the one colour per role, used by every terminal renderer
// (the room's gutter and prompt, replay's labels).
var RoleColors = map[events.Role]color.Attribute{
	events.RoleUser:         color.FgGreen,
	events.RoleClaude:       color.FgHiMagenta,
	events.RoleCodex:        color.FgCyan,
	events.RoleOrchestrator: color.FgYellow,
	events.RoleRelayBaton:   color.FgBlue,
}

// Paint returns s in the given attributes when on is set, else s. It
// ignores color.NoColor: the caller decided (NO_COLOR, --color, the TTY).
func Paint(on bool, s string, attrs ...color.Attribute) string {
	if !on || len(attrs) == 0 {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

// Terminal renders labelled lines and activities for a terminal. Every line
// starts with its speaker's gutter, "[role] " (coloured by role when colour
// is on, the same text without it), also each line of a multi-line reply;
// every untrusted string goes through Inert first. It keeps the state of a
// streamed reply (an open line, a thinking streak) and is not safe for
// concurrent use: callers serialise.
type Terminal struct {
	w     io.Writer
	color bool

	open     bool        // a text line is on screen with no newline yet
	inBlock  bool        // text was written since the last other line
	role     events.Role // the speaker of the open text
	thinking bool        // a thinking line was written and nothing since

	// With a width (SetWidth) or Markdown (SetMarkdown), reply text is
	// shown a line at a time: held until its newline (or the end of the
	// reply), then wrapped at words: the gutter, then rows under a hanging
	// indent.
	width   func() int // the terminal's columns; nil: lines are not wrapped
	md      *Markdown  // nil: replies are shown as written
	pending string     // the reply's line held until its newline
}

// SetWidth makes the renderer wrap lines at words to the columns width
// returns (asked at each line, so a resize is followed), each row with the
// speaker's gutter. Reply text is then shown a line at a time.
func (t *Terminal) SetWidth(width func() int) { t.width = width }

// SetMarkdown renders the Markdown of reply text (Markdown) when on and
// colour is on; without colour (NO_COLOR, a pipe) replies stay as written.
func (t *Terminal) SetMarkdown(on bool) {
	t.md = nil
	if on && t.color {
		t.md = &Markdown{}
	}
}

// Wrap wraps each line of s (already safe) at words to the renderer's
// width (SetWidth), continuation rows under the line's hanging indent; s
// is returned as is without a width.
func (t *Terminal) Wrap(s string) string {
	n := t.cols()
	if n <= 0 {
		return s
	}
	var b strings.Builder
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Join(WrapLine(l, 0, n), "\n"))
	}
	return b.String()
}

// buffered reports whether reply text is shown a line at a time.
func (t *Terminal) buffered() bool { return t.width != nil || t.md != nil }

// cols is the width to wrap at, 0 for none.
func (t *Terminal) cols() int {
	if t.width == nil {
		return 0
	}
	return t.width()
}

// NewTerminal returns a renderer writing to w, coloured when color is set.
func NewTerminal(w io.Writer, color bool) *Terminal {
	return &Terminal{w: w, color: color}
}

// Color reports whether the renderer colours.
func (t *Terminal) Color() bool { return t.color }

// Label is "[role]" ("[you]" for the user) in the role's colour.
func (t *Terminal) Label(r events.Role) string {
	name := InertLine(string(r))
	if r == events.RoleUser {
		name = "you"
	}
	return Paint(t.color, "["+name+"]", RoleColors[r])
}

// Dim returns s faint when colour is on.
func (t *Terminal) Dim(s string) string { return Paint(t.color, s, color.Faint) }

// Open reports whether a text line is open (written with no newline yet).
func (t *Terminal) Open() bool { return t.open }

// EndLine ends an open text line with a newline (or shows the reply's
// held line and table); it reports whether there was one.
func (t *Terminal) EndLine() bool {
	if t.buffered() && (t.pending != "" || (t.md != nil && (t.md.fence != "" || len(t.md.rawTable) > 0))) {
		var rows []string
		if t.pending != "" {
			rows = t.renderLine(t.pending)
		}
		if t.md != nil {
			rows = append(rows, t.md.Flush()...)
			t.md.Reset()
		}
		t.pending = ""
		t.writeRows(t.role, rows)
		return true
	}
	if t.md != nil {
		t.md.Reset()
	}
	if !t.open {
		return false
	}
	io.WriteString(t.w, "\n")
	t.open = false
	return true
}

// renderLine is one complete line of reply text as rows to print (none
// while Markdown holds a table).
func (t *Terminal) renderLine(s string) []string {
	if t.md == nil {
		return []string{s}
	}
	return t.md.Line(s)
}

// writeRows writes rows of speaker r, each after the gutter; a row too
// wide for the terminal continues under a hanging indent as wide as the
// gutter (a repeated gutter would read as a new message).
func (t *Terminal) writeRows(r events.Role, rows []string) {
	if len(rows) == 0 {
		return
	}
	g := t.Label(r)
	hang := strings.Repeat(" ", Width(g))
	var b strings.Builder
	for _, row := range rows {
		for i, l := range WrapLine(row, Width(g)+1, t.cols()) {
			if i == 0 {
				b.WriteString(g)
			} else {
				b.WriteString(hang)
			}
			if l != "" { // an empty row: the gutter alone, no trailing space
				b.WriteByte(' ')
				b.WriteString(l)
			}
			b.WriteByte('\n')
		}
	}
	io.WriteString(t.w, b.String())
}

// Lines writes text as lines of speaker r, each with the gutter. The text
// is sanitized; a trailing newline adds no empty line.
func (t *Terminal) Lines(r events.Role, text string) {
	t.EndLine()
	t.inBlock, t.thinking = false, false
	t.writeRows(r, strings.Split(strings.TrimRight(Inert(text), "\n"), "\n"))
}

// line writes one gutter line of r (s already safe).
func (t *Terminal) line(r events.Role, s string) {
	t.EndLine()
	t.inBlock, t.thinking = false, false
	t.writeRows(r, []string{s})
}

// Activity renders one activity of speaker r and reports whether it wrote
// anything. Text streams: it is written as it comes, a gutter at the start
// of each line. A thinking streak gives one line; usage and successful
// tool results write nothing.
func (t *Terminal) Activity(r events.Role, a events.Activity) bool {
	switch a.Kind {
	case events.ActThinking:
		if t.thinking {
			return false
		}
		t.line(r, t.Dim("… thinking"))
		t.thinking = true
	case events.ActText:
		return t.text(r, a.Text)
	case events.ActTool:
		d := ""
		if a.Detail != "" {
			d = ": " + a.Detail
		}
		t.line(r, t.Dim("⚙ "+InertLine(Cut(a.Tool+d, 160))))
	case events.ActToolResult:
		if !a.IsError {
			return false
		}
		s := "  ✗ tool failed"
		if a.ExitCode != nil {
			s += fmt.Sprintf(" (exit %d)", *a.ExitCode)
		}
		if a.Text != "" {
			s += ": " + InertLine(Cut(a.Text, 200))
		}
		t.line(r, t.Dim(s))
	case events.ActError:
		t.line(r, "error: "+InertLine(Cut(a.Text, 400)))
	case events.ActRaw:
		if strings.TrimSpace(a.Text) == "" {
			return false
		}
		t.line(r, t.Dim(InertLine(Cut(a.Text, 400))))
	case events.ActDone:
		t.line(r, "✓ end of turn")
	case events.ActDelivered:
		via := ""
		if a.Detail != "" {
			via = " via " + InertLine(a.Detail)
		}
		if m := deliveredMessage(a.Text); m != "" {
			via += ": " + InertLine(Cut(m, 200))
		}
		t.line(r, t.Dim("→ chat message delivered"+via))
	case events.ActUser:
		t.line(events.RoleUser, InertLine(Cut(a.Text, 200)))
	default: // usage, and kinds a newer parser may add
		return false
	}
	return true
}

// text streams reply text of r.
func (t *Terminal) text(r events.Role, s string) bool {
	if s == "" {
		return false
	}
	if (t.open || t.pending != "") && t.role != r {
		t.EndLine()
		t.inBlock = false
	}
	if !t.inBlock {
		s = strings.TrimLeft(s, "\n")
		if s == "" {
			return false
		}
	}
	s = Inert(s)
	if t.buffered() {
		t.role, t.inBlock, t.thinking = r, true, false
		s = t.pending + s
		var rows []string
		for {
			line, rest, nl := strings.Cut(s, "\n")
			if !nl {
				break
			}
			rows = append(rows, t.renderLine(line)...)
			s = rest
		}
		t.pending = s
		t.writeRows(r, rows)
		return true
	}
	var b strings.Builder
	for s != "" {
		if !t.open {
			b.WriteString(t.Label(r))
			b.WriteByte(' ')
			t.open = true
		}
		line, rest, nl := strings.Cut(s, "\n")
		b.WriteString(line)
		if nl {
			b.WriteByte('\n')
			t.open = false
		}
		s = rest
	}
	io.WriteString(t.w, b.String())
	t.role, t.inBlock, t.thinking = r, true, false
	return true
}

// deliveredMessage is the message a delivered chat frame carries (the text
// between its <chat-message> tags), "" when the text is not such a frame.
func deliveredMessage(framed string) string {
	i := strings.LastIndex(framed, "<chat-message>")
	if i < 0 {
		return ""
	}
	body := framed[i+len("<chat-message>"):]
	if j := strings.LastIndex(body, "</chat-message>"); j >= 0 {
		body = body[:j]
	}
	return strings.TrimSpace(body)
}
