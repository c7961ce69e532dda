package render

import (
	"strings"
	"unicode/utf8"
)

// Wrap returns first followed by the words of text, wrapped at width
// columns, each continuation line indented by indent spaces, with a
// newline after the last line. The first word always goes on the first
// line, and a word longer than the width is left whole.
func Wrap(first, text string, indent, width int) string {
	var b strings.Builder
	line, n := first, utf8.RuneCountInString(first)
	empty := true
	for _, word := range strings.Fields(text) {
		wn := utf8.RuneCountInString(word)
		if !empty && n+1+wn > width {
			b.WriteString(line + "\n")
			line, n, empty = strings.Repeat(" ", indent), indent, true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wn
		empty = false
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}
