package repl

import (
	"io"
	"strings"
	"testing"
)

// The parser on its own: markers split across reads, Alt-Enter, a long
// burst, ask mode and Flush.
func TestTermInputParser(t *testing.T) {
	in := newTermInput(eofReader{}, -1)
	<-in.stopped
	in.err = nil
	feedAll := func(parts ...string) {
		for _, p := range parts {
			in.feed([]byte(p))
		}
	}
	read := func() string {
		var out []byte
		b := make([]byte, 8)
		for len(in.keys) > 0 {
			n, _ := in.Read(b)
			out = append(out, b[:n]...)
		}
		return string(out)
	}
	feedAll("ab\x1b[2", "00~one\ntwo\x1b[20", "1~cd\r")
	got := read()
	if !strings.HasPrefix(got, "ab«paste 1: 2 lines, 7 chars»cd\r") {
		t.Fatalf("keys %q", got)
	}
	if exp := in.Expand(strings.TrimSuffix(got, "\r")); exp != "abone\ntwocd" {
		t.Fatalf("expanded %q", exp)
	}
	feedAll("\x1b[200~word\x1b[201~", "\x1b\r", "\x1b[A")
	if got := read(); got != "word\\\r\x1b[A" {
		t.Fatalf("short paste, Alt-Enter, arrow: %q", got)
	}
	long := strings.Repeat("z", 5000)
	in.feed([]byte(long + "\r"))
	got = read()
	if len(got) > LongRun+100 || !strings.HasSuffix(got, "\r") {
		t.Fatalf("a long burst reached the editor whole: %d bytes", len(got))
	}
	if exp := in.Expand(strings.TrimSuffix(got, "\r")); exp != long {
		t.Fatalf("long line expanded to %d bytes", len(exp))
	}
	in.SetAsk(true)
	feedAll("\x1b[200~y\r\x1b[201~")
	if got := read(); got != "" || in.SetAsk(false) != 1 {
		// (SetAsk reports the pastes dropped while asking)
		t.Fatalf("a paste while asking gave keys %q", got)
	}
	feedAll("y\r", "\x1b[200~half")
	if k, _ := in.Flush(); k != 2 {
		t.Fatalf("flushed %d keys", k)
	}
	feedAll(" of a paste\x1b[201~n\r")
	if got := read(); got != "n\r" {
		t.Fatalf("after Flush: %q", got)
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
