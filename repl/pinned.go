package repl

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

	"github.com/chzyer/readline"
	"github.com/relay-baton/relay-baton/panel"
	"github.com/relay-baton/relay-baton/room"
)

// termWidth is the REPL terminal's width: the input terminal's size when
// it is one, else $COLUMNS, else 80.
func termWidth(o Options) int {
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
func panelText(ctx context.Context, e *room.Engine, o Options) string {
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
//
// reading reports whether readline reads keys (readline.Terminal's
// IsReading). readline prints its prompt first and only then starts
// reading; a line written through its writer in between is written as it
// is, after the prompt, and the prompt is not redrawn: at 60 columns the
// status line once hid the prompt until a key was typed. So the one-line
// status waits until readline reads (nil: it does not wait). A value on
// poke has the pinned panel gather its facts again at once (another
// screen's turn ended, its run took or let go of the repository).
func startPanel(ctx context.Context, e *room.Engine, o Options, w io.Writer, pin *pinnedPanel, reading func() bool, poke <-chan struct{}) (stop func()) {
	e.AdoptOthers() // the engine is the prompt's until stop
	if !o.Terminal {
		e.Print(panelText(ctx, e, o))
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
			mu.Unlock()
			if !waitReading(pctx, reading) {
				return
			}
			mu.Lock()
			if !stale && pctx.Err() == nil {
				e.HoldOutput(false, func() { io.WriteString(w, p.Line(termWidth(o), o.Color)+"\n") })
			}
			mu.Unlock()
			return
		}
		mu.Unlock()
		// The pinned panel follows the repository while the prompt waits:
		// a refresh of the git facts that was running ends, files change.
		t := time.NewTicker(PanelRefresh)
		defer t.Stop()
		last := strings.Join(p.Block(panel.MinWidth, false), "\n")
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			case <-poke:
			}
			e.AdoptOthers()
			p := e.Panel(pctx)
			now := strings.Join(p.Block(panel.MinWidth, false), "\n")
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

// waitReading waits until reading reports true (nil: at once); false when
// ctx ended first.
func waitReading(ctx context.Context, reading func() bool) bool {
	if reading == nil {
		return true
	}
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for !reading() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
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
// narrower than panel.MinWidth, or too short, gets no pinned panel (the
// REPL prints the one-line status instead).
type pinnedPanel struct {
	w     io.Writer
	size  func() (cols, rows int, ok bool)
	color bool

	mu     sync.Mutex
	height int // rows reserved at the bottom; 0 when not pinned
	rows   int // the terminal's rows when the region was set
	last   *panel.Facts
	// suspended: a program has the whole screen (Suspend) until Reapply.
	suspended bool
	// repaint redraws the panel's rows in place and puts the cursor
	// back (DECSC ... DECRC); nil when not pinned. termWriter writes it
	// after anything that erased below the cursor.
	repaint atomic.Pointer[string]
}

// pinnedMinRows is how many rows the conversation keeps above the panel.
const pinnedMinRows = 10

// Draw shows p in the bottom rows (reserving them the first time) and
// reports whether it could: false on a narrow or short terminal.
func (pp *pinnedPanel) Draw(p panel.Facts) bool {
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
	if pp.last == nil || pp.suspended {
		return false
	}
	if pp.height > 0 {
		erase := "\x1b[J"
		if atLineStart {
			erase = "\r\x1b[J"
		}
		// Forgotten first: the writer would paint the old panel, at the
		// old rows, after the erase.
		pp.repaint.Store(nil)
		io.WriteString(pp.w, "\x1b7\x1b[r\x1b8"+erase)
		pp.height = 0
	}
	return pp.drawLocked(false)
}

func (pp *pinnedPanel) drawLocked(resized bool) bool {
	cols, rows, ok := pp.size()
	if !ok || cols < panel.MinWidth {
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
	case !resized && pp.rows == rows && h > pp.height:
		// The panel grows (a "held by" row): the conversation scrolls up
		// by the rows it takes, so its last lines and the prompt stay
		// on screen with the cursor on them, then the region is fenced.
		d := h - pp.height
		fmt.Fprintf(&b, "\x1b7\x1b[%d;1H%s\x1b8\x1b[%dA\x1b7\x1b[1;%dr", rows-pp.height, strings.Repeat("\n", d), d, rows-h)
	case !resized && pp.rows == rows && h < pp.height:
		// The panel shrinks: the region takes the rows back, cleared;
		// the conversation and the cursor stay where they are.
		b.WriteString("\x1b7")
		fmt.Fprintf(&b, "\x1b[1;%dr", rows-h)
		for r := rows - pp.height + 1; r <= rows-h; r++ {
			fmt.Fprintf(&b, "\x1b[%d;1H\x1b[2K", r)
		}
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

// Reapply sets the region again after a program (an editor, a pager) had
// the terminal, which may have reset it, or after Suspend.
func (pp *pinnedPanel) Reapply() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if (pp.height == 0 && !pp.suspended) || pp.last == nil {
		return
	}
	pp.suspended = false
	pp.height = 0 // reserve again: the editor may have cleared the screen
	pp.drawLocked(false)
}

// Pinned reports whether the panel holds the bottom rows.
func (pp *pinnedPanel) Pinned() bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.height > 0
}
