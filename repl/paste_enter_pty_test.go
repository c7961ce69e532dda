package repl

import (
	"fmt"
	"testing"
)

// A multi-line bracketed paste and Enter written at once, 200 times, each
// answered at its confirmation: every Enter sends its paste. Half the
// answers are one key with no Enter (the room takes one key), after which
// the Enter the user often types is dropped; a paste typed next is the
// user doing something else, and the Enter after it must not be taken for
// that dropped one (it was: the first Enter after a paste that followed a
// one-key answer was swallowed).
func TestPTYPasteThenEnterAtOnce(t *testing.T) {
	fr := &fakeRunner{}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	const n = 200
	for i := range n {
		p.send(t, fmt.Sprintf("\x1b[200~PASTE-%03d line one\nline two\x1b[201~\r", i))
		p.until(t, fmt.Sprintf("PASTE-%03d line one", i)) // its preview
		p.until(t, "run this? [y/N/e] ")
		if i%2 == 0 {
			p.send(t, "n") // one key, no Enter
		} else {
			p.send(t, "n\r")
		}
		p.until(t, "cancelled. nothing ran.")
		p.until(t, "claude› ")
	}
	p.send(t, "\x04")
	if fr.runs() != 0 {
		t.Fatalf("%d runs after n", fr.runs())
	}
}
