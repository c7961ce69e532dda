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

// WrapLine breaks one line of terminal text into rows that fit width
// columns once a gutter of used columns precedes each: at spaces, a word
// wider than a row being cut. Continuation rows start with the line's
// hanging indent (its leading spaces and its list or box marker: "  │ "
// is repeated, "  argv:    " becomes spaces), so the text stays aligned
// under the gutter. The SGR attributes open at a break are closed before
// it and opened again after the indent. width <= 0 returns the line whole.
func WrapLine(s string, used, width int) []string {
	room := width - used
	if width <= 0 || Width(s) <= room || room < 8 {
		return []string{s}
	}
	hang := hangingIndent(s)
	if Width(hang) > room/2 {
		hang = ""
	}
	var rows []string
	var row strings.Builder
	rowW := 0
	active := ""               // SGR sequences in effect (since the last reset)
	lastSpace, spaceW := -1, 0 // byte offset in row after the last space, and the row's width there
	activeAtSpace := ""
	flush := func(cut int, cutW int, act string) {
		text := row.String()
		head, tail := text, ""
		if cut >= 0 {
			head, tail = text[:cut], text[cut:]
		}
		head = strings.TrimRight(head, " ")
		if act != "" {
			head += "\x1b[0m"
		}
		rows = append(rows, head)
		row.Reset()
		row.WriteString(hang)
		if act != "" {
			row.WriteString(act)
		}
		row.WriteString(tail)
		rowW = Width(hang) + (rowW - cutW)
		if cut < 0 {
			rowW = Width(hang)
		}
		lastSpace, spaceW = -1, 0
	}
	for i := 0; i < len(s); {
		if s[i] == 0x1b { // an SGR sequence: no width
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
			}
			seq := s[i:min(j+1, len(s))]
			if seq == "\x1b[0m" || seq == "\x1b[m" {
				active = ""
			} else {
				active += seq
			}
			row.WriteString(seq)
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := runeWidth(r)
		if rowW+w > room && r != ' ' {
			if lastSpace >= 0 && spaceW > Width(hang) {
				flush(lastSpace, spaceW, activeAtSpace)
			} else {
				flush(-1, 0, active)
			}
		}
		row.WriteString(s[i : i+size])
		rowW += w
		if r == ' ' && rowW > Width(hang)+1 {
			lastSpace, spaceW, activeAtSpace = row.Len(), rowW, active
		}
		i += size
	}
	if row.Len() > 0 {
		rows = append(rows, row.String())
	}
	return rows
}

// hangingIndent is the prefix continuation rows of s start with.
func hangingIndent(s string) string {
	plain := plainText(s)
	t := strings.TrimLeft(plain, " ")
	lead := plain[:len(plain)-len(t)]
	for _, m := range []string{"│ ", "▎ "} {
		if strings.HasPrefix(t, m) {
			return lead + m
		}
	}
	for _, m := range []string{"• ", "◦ ", "☐ ", "☑ ", "- ", "* "} {
		if strings.HasPrefix(t, m) {
			return lead + strings.Repeat(" ", Width(m))
		}
	}
	if n, _, ok := ordered(t); ok {
		return lead + strings.Repeat(" ", len(n)+1)
	}
	// "label:   value": continuation under the value.
	if i := strings.Index(t, ":  "); i > 0 && i < 24 && !strings.Contains(t[:i], " ") {
		j := i + 1
		for j < len(t) && t[j] == ' ' {
			j++
		}
		return lead + strings.Repeat(" ", Width(t[:j]))
	}
	return lead
}

// plainText removes escape sequences from s.
func plainText(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			i = escapeEnd(s, i)
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
