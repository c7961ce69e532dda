package render

import (
	"bufio"
	"io"

	"github.com/relay-baton/relay-baton/events"
)

// Stream writes activities one after another to w, buffered (a scan of a
// big transcript would otherwise make one write per activity): as JSON
// lines, what json.Encoder writes for an Activity without reflection, or
// through a Terminal. A caller that follows a live source calls Flush after
// each batch; Close ends an open line and flushes.
type Stream struct {
	out  *bufio.Writer
	tr   *Terminal // nil: JSON lines
	line []byte
}

// NewStream returns a Stream to w: JSON lines when asJSON, else terminal
// text, coloured when color is set.
func NewStream(w io.Writer, color, asJSON bool) *Stream {
	s := &Stream{out: bufio.NewWriterSize(w, 64<<10)}
	if !asJSON {
		s.tr = NewTerminal(s.out, color)
	}
	return s
}

// Activity writes a, said by r (the terminal's gutter; JSON lines carry
// no role).
func (s *Stream) Activity(r events.Role, a events.Activity) {
	if s.tr != nil {
		s.tr.Activity(r, a)
		return
	}
	var err error
	if s.line, err = events.AppendActivityJSON(s.line[:0], a); err == nil {
		s.out.Write(append(s.line, '\n'))
	}
}

// Flush writes out what is buffered.
func (s *Stream) Flush() error { return s.out.Flush() }

// Close ends an open terminal line and flushes.
func (s *Stream) Close() error {
	if s.tr != nil {
		s.tr.EndLine()
	}
	return s.out.Flush()
}
