package render

import "testing"

func TestCutWords(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"add tests for everything including a rather long step", 30, "add tests for everything…"},
		{"add tests for\neverything", 30, "add tests for everything"},
		{"exactly ten", 11, "exactly ten"},
		{"cut at the space here", 11, "cut at the…"},
		{"averyveryverylongwordwithoutspaces and more", 12, "averyveryve…"},
	} {
		if got := CutWords(c.s, c.n); got != c.want {
			t.Errorf("CutWords(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
