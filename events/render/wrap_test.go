package render

import "testing"

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		first, text   string
		indent, width int
		want          string
	}{
		{"  -x  ", "one two three four", 6, 16, "  -x  one two\n      three four\n"},
		{"", "a b", 0, 80, "a b\n"},
		{"head ", "", 2, 10, "head\n"},
		{"", "unbreakableword x", 2, 5, "unbreakableword\n  x\n"},
		{"> ", "é é é é", 2, 7, "> é é é\n  é\n"}, // runes, not bytes
	} {
		if got := Wrap(c.first, c.text, c.indent, c.width); got != c.want {
			t.Errorf("Wrap(%q, %q, %d, %d) = %q, want %q", c.first, c.text, c.indent, c.width, got, c.want)
		}
	}
}
