package cli

import (
	"sort"
	"strings"
)

// Suggest returns the candidates close to a mistyped name: those it is a
// prefix of, then those within a small edit distance (insertions,
// deletions, substitutions and swaps of neighbours, at most 1 for names of
// up to 4 letters and 2 beyond), only the nearest (all of them when
// several are as near).
func Suggest(name string, candidates []string) []string {
	name = strings.ToLower(name)
	if name == "" {
		return nil
	}
	type hit struct {
		s string
		d int
	}
	var hits []hit
	limit := 1
	if len([]rune(name)) > 4 {
		limit = 2
	}
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] || c == name {
			continue
		}
		seen[c] = true
		switch d := editDistance(name, strings.ToLower(c)); {
		case strings.HasPrefix(strings.ToLower(c), name):
			hits = append(hits, hit{c, 0})
		case d <= limit:
			hits = append(hits, hit{c, d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].d < hits[j].d })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		if h.d > hits[0].d { // only the closest: --folow is --follow, not also --color
			break
		}
		out = append(out, h.s)
	}
	return out
}

// DidYouMean is " (did you mean a or b?)", or "" without candidates; each
// is written with prefix ("/" in the room).
func DidYouMean(prefix string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) > 3 {
		names = names[:3]
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = prefix + n
	}
	return " (did you mean " + strings.Join(q, " or ") + "?)"
}

// editDistance is the optimal string alignment distance of a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
