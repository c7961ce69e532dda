package render

import "strings"

// CutWords is Cut ending at a word boundary: s on one line, cut to at
// most n runes after its last whole word that leaves at least half of
// them, with a trailing "…" when longer. A text whose first n/2 runes hold
// no space is cut as Cut cuts it. It does not sanitize.
func CutWords(s string, n int) string {
	c := Cut(s, n)
	whole := Cut(s, len(s)+1) // on one line, not cut
	if c == whole {
		return c
	}
	r := []rune(whole)[:n] // the n runes kept, and the one after them
	for i := n - 1; i >= n/2; i-- {
		if r[i] == ' ' {
			return strings.TrimRight(string(r[:i]), " ") + "…"
		}
	}
	return c
}
