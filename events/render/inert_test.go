package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/events"
)

func TestInert(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":                        "plain text",
		"two\nlines\tand a tab":             "two\nlines\tand a tab",
		"title \x1b]0;pwned\x07 done":       "title ^[]0;pwned^G done",
		"clear \x1b[2J":                     "clear ^[[2J",
		"clip \x1b]52;c;aGk=\x07":           "clip ^[]52;c;aGk=^G",
		"cr\rover":                          "cr^Mover",
		"del\x7f nul\x00":                   "del^? nul^@",
		"c1 csi \u009b2J nel \u0085":        `c1 csi \u009b2J nel \u0085`,
		"raw c1 \x9b2J":                     `raw c1 \x9b2J`,
		"bad \xff\xfe utf8":                 `bad \xff\xfe utf8`,
		"ünïcödé ✓ and \ufffd itself":       "ünïcödé ✓ and \ufffd itself",
		"truncated rune \xe2\x9c":           `truncated rune \xe2\x9c`,
		"longer plain ascii run here..":     "longer plain ascii run here..",
		"rlo \u202egnp.exe\u202c":           "rlo <U+202E>gnp.exe<U+202C>",
		"isolates \u2066a\u2069 \u061c":     "isolates <U+2066>a<U+2069> <U+061C>",
		"marks \u200e\u200f":                "marks <U+200E><U+200F>",
		"zero\u200bwidth\u200c\u200d\u2060": "zero<U+200B>width<U+200C><U+200D><U+2060>",
		"\ufeffbom":                         "<U+FEFF>bom",
	} {
		if got := Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
	if got := InertLine("a\nb\x1b"); got != "a⏎b^[" {
		t.Errorf("InertLine = %q", got)
	}
	if got := string(AppendInert([]byte("x:"), "\x1b[31m")); got != "x:^[[31m" {
		t.Errorf("AppendInert = %q", got)
	}
}

func TestInertNoAllocWhenClean(t *testing.T) {
	s := strings.Repeat("a clean line of text, ünïcode too\n", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Inert(s) }); n != 0 {
		t.Errorf("Inert of clean text allocates %v times", n)
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  folded \n\t white   space ", 40, "folded white space"},
		{"exactly ten", 11, "exactly ten"},
		{"one two three", 7, "one tw…"},
		{"ünïcödé", 4, "ünï…"},
		{"x", 0, ""},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// checkInert fails when out holds anything a terminal could act on.
func checkInert(t *testing.T, in, out string, keepNL bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output not valid UTF-8 (a raw byte 0x80-0xff passed): %q -> %q", in, out)
	}
	for i, r := range out {
		switch {
		case r == '\t', r == '\n' && keepNL:
		case r < 0x20:
			t.Fatalf("C0 byte %#x at %d: %q -> %q", r, i, in, out)
		case r == 0x7f:
			t.Fatalf("DEL at %d: %q -> %q", i, in, out)
		case r >= 0x80 && r <= 0x9f:
			t.Fatalf("C1 U+%04X at %d: %q -> %q", r, i, in, out)
		case events.HiddenControl(r):
			t.Fatalf("bidi or zero-width U+%04X at %d: %q -> %q", r, i, in, out)
		}
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c >= 0x80 && c <= 0x9f && (i == 0 || out[i-1] < 0xc0 && (out[i-1] < 0x80 || out[i-1] > 0xbf)) {
			t.Fatalf("raw C1 byte %#x at %d: %q -> %q", c, i, in, out)
		}
	}
}

func FuzzInert(f *testing.F) {
	for _, s := range []string{
		"", "hello", "\x1b]0;title\x07", "\x1b[2J", "\x1b]52;c;aGk=\x07", "\u009b31m", "\x9b31m",
		"\xc2\x9b", "\xc2", "\r\n\t\v\f", "\x7f", "ok ✓ \ufffd", "\u202e\u200b\ufeff", strings.Repeat("abcdefgh", 4) + "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Inert(s)
		checkInert(t, s, out, true)
		if Inert(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, Inert(out))
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("newlines not kept: %q -> %q", s, out)
		}
		line := InertLine(s)
		checkInert(t, s, line, false)
		if string(AppendInert(nil, s)) != out {
			t.Fatalf("AppendInert differs from Inert for %q", s)
		}
		// Through the terminal renderer too: what it writes is as inert.
		var b strings.Builder
		r := NewTerminal(&b, false)
		r.Lines("claude", s)
		checkInert(t, s, b.String(), true)
	})
}
