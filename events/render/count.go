package render

import (
	"fmt"
	"strings"
)

// Count is n with its noun in agreement: Count(1, "file") is "1 file",
// Count(2, "file") "2 files". A noun whose plural is not noun+"s" is given
// as "singular|plural" ("match|matches").
func Count(n int, noun string) string {
	one, many, ok := strings.Cut(noun, "|")
	if !ok {
		many = one + "s"
	}
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
