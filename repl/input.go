package repl

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/relay-baton/relay-baton/events/render"
)

// termInput sits between the room's stdin and the line editor (readline):
//
//   - It owns bracketed paste (the room asks the terminal for it with
//     ESC[?2004h): a paste, ESC[200~ ... ESC[201~, never reaches readline as
//     keys. A short one-line paste is typed in as it is; any other becomes a
//     placeholder «paste N: L lines, C chars» in the line being edited,
//     expanded when the line is sent, so a pasted block is one message and
//     readline only ever redraws the short placeholder.
//   - A long burst of plain text that is not a bracketed paste (a terminal
//     without bracketed paste, a program writing to the pty) is treated the
//     same way past LongRun bytes: readline's redraw costs O(line length)
//     per key, quadratic over a line, so the rest of such a line is
//     collected here in O(1) per byte and shown as a placeholder.
//   - Alt-Enter (ESC CR) becomes "\" + CR: the room's continuation line.
//   - It hands readline at most one line per Read (up to the first CR/LF),
//     so readline's own buffer never holds typed-ahead lines, and Flush
//     discards everything that arrived before a question was shown
//     (confirmations count only keys pressed after their preview).
//   - In ask mode (a confirmation) pastes are dropped whole: nothing
//     inside a paste answers a question.
//
// On a terminal it reads only when poll(2) says there is input, so Pause
// (an editor owns the terminal) and Close never leave a read pending.
type termInput struct {
	src     io.Reader
	fd      int // the terminal's descriptor, -1 for a pipe
	mu      sync.Mutex
	cond    *sync.Cond
	keys    []byte            // bytes for readline
	pastes  map[string]string // placeholder -> content, for the lines being edited
	npaste  int
	ask     bool // a confirmation is being asked: pastes are dropped
	dropped int  // pastes dropped while asking
	// oneKey (while asking): the first key typed is the whole answer,
	// Enter is added for readline; the keys typed after it until the
	// question ends are dropped, and so is the Enter that often follows.
	oneKey    bool
	answered  bool
	swallowNL bool
	paused    bool
	closed    bool
	err       error
	stopped   chan struct{} // closed when the reader goroutine ends
	state     pasteState
	maxPaste  int
	// onDrop, when set, is called (on its own goroutine) when a paste is
	// dropped because a confirmation is being asked.
	onDrop func()
	// onFocus, when set, is called (under the lock: it must not block)
	// with each focus report: true when the terminal gained focus.
	onFocus func(focused bool)
}

// LongRun is how many plain bytes of one burst reach the line editor
// before the rest of the line is collected as a placeholder.
const LongRun = 1024

// shortPaste is the largest one-line paste typed in as keys.
const shortPaste = 200

// MaxPasteBytes caps one paste kept in memory; the rest is dropped and the
// placeholder says so.
const MaxPasteBytes = 64 << 20

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// pasteState is the parser's state across reads.
type pasteState struct {
	inPaste  bool
	held     []byte // a partial marker (or ESC) held until the next byte decides
	paste    bytes.Buffer
	cut      int  // bytes of the paste over MaxPasteBytes
	discard  bool // the rest of the current paste is dropped (Flush)
	run      int  // plain bytes since the last control byte
	overflow bytes.Buffer
	over     bool // collecting a long line's rest
}

// newTermInput starts reading src; fd is its terminal descriptor, or -1.
func newTermInput(src io.Reader, fd int) *termInput {
	t := &termInput{src: src, fd: fd, pastes: map[string]string{}, stopped: make(chan struct{}), maxPaste: MaxPasteBytes}
	t.cond = sync.NewCond(&t.mu)
	go t.loop()
	return t
}

func (t *termInput) loop() {
	defer close(t.stopped)
	buf := make([]byte, 64<<10)
	for {
		t.mu.Lock()
		for t.paused && !t.closed {
			t.cond.Wait()
		}
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		if t.fd >= 0 {
			ready, err := waitReadable(t.fd, 100)
			if err != nil {
				t.fail(err)
				return
			}
			if !ready {
				continue
			}
			t.mu.Lock()
			skip := t.paused || t.closed
			t.mu.Unlock()
			if skip {
				continue
			}
		}
		n, err := t.src.Read(buf)
		if n > 0 {
			t.feed(buf[:n])
		}
		if err != nil {
			t.fail(err)
			return
		}
	}
}

func (t *termInput) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finishOverflowLocked()
	if t.err == nil {
		t.err = err
	}
	t.cond.Broadcast()
}

// feed parses one read: linear in its length.
func (t *termInput) feed(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.state
	burst := len(p) >= 64
	for _, b := range p {
		if s.inPaste {
			t.pasteByteLocked(b)
			continue
		}
		if t.swallowNL && b != '\r' && b != '\n' && !(t.ask && t.oneKey) {
			// After a one-key answer, anything but Enter (a paste, an
			// arrow key, a letter) is the user doing something else: the
			// next Enter is theirs, not the one typed after the answer.
			t.swallowNL = false
		}
		if len(s.held) > 0 || b == 0x1b {
			s.held = append(s.held, b)
			switch {
			case bytes.Equal(s.held, pasteStart):
				s.held = s.held[:0]
				t.keys = t.endOverflowInto(t.keys)
				s.inPaste, s.discard, s.cut = true, false, 0
				s.paste.Reset()
			case len(s.held) == 2 && (b == '\r' || b == '\n'):
				// Alt-Enter: a newline in the message.
				s.held = s.held[:0]
				t.keys = t.endOverflowInto(t.keys)
				t.keys = append(t.keys, '\\', '\r')
				s.run = 0
			case len(s.held) == 3 && s.held[1] == '[' && (b == 'I' || b == 'O'):
				// A focus report (the room asked for them, CSI ?1004h):
				// not a key.
				s.held = s.held[:0]
				if t.onFocus != nil {
					t.onFocus(b == 'I')
				}
			case bytes.HasPrefix(pasteStart, s.held):
				// maybe the start of a paste: wait for the next byte
			case b == 0x1b && len(s.held) > 1:
				// a new escape: the held bytes were keys
				t.keys = t.endOverflowInto(t.keys)
				t.keys = append(t.keys, s.held[:len(s.held)-1]...)
				s.held = append(s.held[:0], 0x1b)
				s.run = 0
			default:
				t.keys = t.endOverflowInto(t.keys)
				t.keys = append(t.keys, s.held...)
				s.held = s.held[:0]
				s.run = 0
			}
			continue
		}
		plain := b >= 0x20 && b != 0x7f
		if plain && t.ask && t.oneKey && !s.over {
			if !t.answered && b < 0x80 {
				t.keys = append(t.keys, b, '\r')
				t.answered, t.swallowNL = true, true
			}
			continue // the answer, or keys typed after it
		}
		if t.swallowNL {
			t.swallowNL = false
			if b == '\r' || b == '\n' {
				continue // the Enter typed after a one-key answer
			}
		}
		switch {
		case plain && s.over:
			s.overflow.WriteByte(b)
		case plain:
			t.keys = append(t.keys, b)
			s.run++
			if s.run >= LongRun && burst && b < 0x80 {
				s.over = true
				s.overflow.Reset()
			}
		default:
			t.keys = t.endOverflowInto(t.keys)
			t.keys = append(t.keys, b)
			s.run = 0
		}
	}
	if len(t.keys) > 0 {
		t.cond.Broadcast()
	}
}

// pasteByteLocked adds b to the paste, watching for its end marker (whose
// only ESC is its first byte).
func (t *termInput) pasteByteLocked(b byte) {
	s := &t.state
	if len(s.held) == 0 && b != 0x1b {
		t.pasteAppend(b)
		return
	}
	s.held = append(s.held, b)
	switch {
	case bytes.Equal(s.held, pasteEnd):
		s.held = s.held[:0]
		s.inPaste = false
		t.endPasteLocked()
	case bytes.HasPrefix(pasteEnd, s.held):
	case b == 0x1b:
		for _, c := range s.held[:len(s.held)-1] {
			t.pasteAppend(c)
		}
		s.held = append(s.held[:0], 0x1b)
	default:
		for _, c := range s.held {
			t.pasteAppend(c)
		}
		s.held = s.held[:0]
	}
}

func (t *termInput) pasteAppend(b byte) {
	s := &t.state
	if s.discard {
		return
	}
	if s.paste.Len() >= t.maxPaste {
		s.cut++
		return
	}
	s.paste.WriteByte(b)
}

// endPasteLocked files the finished paste: typed in, a placeholder, or
// dropped while a confirmation is asked.
func (t *termInput) endPasteLocked() {
	s := &t.state
	if s.discard {
		s.discard = false
		return
	}
	if t.ask {
		t.dropped++
		s.paste.Reset()
		if t.onDrop != nil {
			go t.onDrop()
		}
		return
	}
	text := strings.ReplaceAll(strings.ReplaceAll(s.paste.String(), "\r\n", "\n"), "\r", "\n")
	s.paste.Reset()
	if text == "" {
		return
	}
	if len(text) <= shortPaste && !strings.ContainsAny(text, "\n\t") && render.Inert(text) == text {
		t.keys = append(t.keys, text...)
		return
	}
	t.keys = append(t.keys, t.placeholderLocked(text, s.cut)...)
	s.cut = 0
}

// placeholderLocked registers text and returns the placeholder standing
// for it in the edited line.
func (t *termInput) placeholderLocked(text string, cut int) string {
	t.npaste++
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	chars := len([]rune(text))
	ph := fmt.Sprintf("«paste %d: %s, %d chars»", t.npaste, render.Count(lines, "line"), chars)
	if cut > 0 {
		ph = fmt.Sprintf("«paste %d: %s, %d chars, %d bytes over the %d MB cap dropped»", t.npaste, render.Count(lines, "line"), chars, cut, t.maxPaste>>20)
	}
	t.pastes[ph] = text
	return ph
}

// endOverflowInto ends a long line's collected rest: its placeholder goes
// into out before the control byte that ended it.
func (t *termInput) endOverflowInto(out []byte) []byte {
	s := &t.state
	if !s.over {
		return out
	}
	s.over, s.run = false, 0
	if s.overflow.Len() == 0 {
		return out
	}
	text := s.overflow.String()
	s.overflow.Reset()
	if t.ask {
		return out // a long line answers nothing; readline has its start
	}
	return append(out, t.placeholderLocked(text, 0)...)
}

func (t *termInput) finishOverflowLocked() {
	t.keys = t.endOverflowInto(t.keys)
}

// Read gives readline the waiting keys, at most up to the first line end.
func (t *termInput) Read(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.keys) == 0 && !t.closed && t.err == nil {
		t.cond.Wait()
	}
	if len(t.keys) == 0 {
		if t.closed {
			return 0, io.EOF
		}
		return 0, t.err
	}
	n := len(t.keys)
	if i := bytes.IndexAny(t.keys, "\r\n"); i >= 0 {
		n = i + 1
	}
	n = copy(b, t.keys[:n])
	t.keys = t.keys[n:]
	if len(t.keys) == 0 {
		t.keys = nil
	}
	return n, nil
}

// Expand replaces the placeholders in line by what they stand for.
func (t *termInput) Expand(line string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !strings.Contains(line, "«paste ") {
		return line
	}
	for ph, text := range t.pastes {
		if strings.Contains(line, ph) {
			line = strings.Replace(line, ph, text, 1)
			delete(t.pastes, ph)
		}
	}
	return line
}

// Flush discards every key and paste that arrived so far, in the kernel's
// terminal buffer too: what follows was typed after the caller showed its
// question. It returns how many bytes and pastes it dropped.
func (t *termInput) Flush() (keys, pastes int) {
	if t.fd >= 0 {
		_ = tcflush(t.fd)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.state
	keys = len(t.keys)
	t.keys = nil
	if s.inPaste {
		s.discard = true
		pastes++
	}
	if s.over {
		s.over = false
		s.overflow.Reset()
	}
	s.run = 0
	s.held = s.held[:0]
	pastes += len(t.pastes)
	clear(t.pastes)
	return keys, pastes
}

// SetAsk switches ask mode (a confirmation: pastes dropped) on or off; it
// returns how many pastes were dropped since ask mode began.
func (t *termInput) SetAsk(on bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ask = on
	t.answered = false
	if on {
		t.swallowNL = false // a new question: an Enter now answers it
	} else {
		t.oneKey = false
	}
	n := t.dropped
	t.dropped = 0
	return n
}

// SetOneKey makes the next question (SetAsk) take one key as its answer.
func (t *termInput) SetOneKey(on bool) {
	t.mu.Lock()
	t.oneKey = on
	t.mu.Unlock()
}

// setOnDrop sets the callback for pastes dropped while asking.
func (t *termInput) setOnDrop(f func()) {
	t.mu.Lock()
	t.onDrop = f
	t.mu.Unlock()
}

// Pause stops reading (an editor owns the terminal); Resume reads again.
func (t *termInput) Pause() {
	t.mu.Lock()
	t.paused = true
	t.mu.Unlock()
}

// Resume undoes Pause.
func (t *termInput) Resume() {
	t.mu.Lock()
	t.paused = false
	t.cond.Broadcast()
	t.mu.Unlock()
}

// Close ends reading: pending and later Reads return io.EOF.
func (t *termInput) Close() error {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	return nil
}
