package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
)

// Markdown renders the Markdown that agents write in their replies for a
// terminal, one line at a time, so that a streamed reply is shown as its
// lines complete. It knows the subset agents use: ATX headings, bullet and
// numbered lists, block quotes, thematic breaks, fenced code blocks, pipe
// tables (held until the table ends, to size its columns), and inline
// strong, emphasis, code spans and links.
//
// Its input is text already made safe by Inert, and the only escape
// sequences in its output are its own SGR attributes (colour, bold...).
// A link is shown as its text followed by its address, never as an OSC 8
// hyperlink: the address is the reply's, and no sequence is built from it.
//
// It is not safe for concurrent use.
type Markdown struct {
	fence    string     // the open fence ("```" or "~~~"), "" outside a code block
	table    [][]string // rows of the table being read (the delimiter row excluded)
	align    []byte     // the table's column alignment: 'l', 'c' or 'r'
	rawTable []string   // the table's lines as written, if it proves not to be one
}

// Line renders one line (without its newline) and returns the lines to
// print now: none while a table is being read, the table's lines once a
// line that is not a table row ends it.
func (m *Markdown) Line(s string) []string {
	if m.fence != "" {
		if t := strings.TrimSpace(s); strings.HasPrefix(t, m.fence) && strings.Trim(t, m.fence[:1]) == "" {
			m.fence = ""
			return []string{Paint(true, "╰─", color.Faint)}
		}
		return []string{Paint(true, "│ ", color.Faint) + Paint(true, s, color.FgHiYellow)}
	}
	var out []string
	if len(m.rawTable) > 0 {
		if row, ok := tableRow(s); ok && (len(m.rawTable) > 1 || m.align != nil) {
			m.table = append(m.table, row)
			m.rawTable = append(m.rawTable, s)
			return nil
		}
		if len(m.rawTable) == 1 && m.align == nil {
			if al, ok := delimiterRow(s, len(m.table[0])); ok {
				m.align = al
				m.rawTable = append(m.rawTable, s)
				return nil
			}
		}
		out = m.Flush()
	}
	if row, ok := tableRow(s); ok {
		m.table, m.align, m.rawTable = [][]string{row}, nil, []string{s}
		return out
	}
	return append(out, m.block(s))
}

// Flush returns what is held (a table at the end of a reply) rendered.
func (m *Markdown) Flush() []string {
	raw, rows, align := m.rawTable, m.table, m.align
	m.rawTable, m.table, m.align = nil, nil, nil
	if len(raw) == 0 {
		return nil
	}
	if align == nil { // one line with pipes, no delimiter row: not a table
		out := make([]string, 0, len(raw))
		for _, l := range raw {
			out = append(out, m.block(l))
		}
		return out
	}
	return renderTable(rows, align)
}

// Reset forgets any open code block or table (a new reply starts).
func (m *Markdown) Reset() { *m = Markdown{} }

// block renders a line outside code blocks and tables.
func (m *Markdown) block(s string) string {
	t := strings.TrimLeft(s, " ")
	indent := s[:len(s)-len(t)]
	if len(indent) >= 4 && m.fence == "" && !listItem(t) {
		return s // an indented code line: as written
	}
	switch {
	case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
		m.fence = t[:3]
		lang := strings.TrimSpace(strings.Trim(t, m.fence[:1]))
		head := "╭─"
		if lang != "" {
			head += " " + lang
		}
		return Paint(true, head, color.Faint)
	case isBreak(t):
		return Paint(true, strings.Repeat("─", 40), color.Faint)
	}
	if level, text, ok := heading(t); ok {
		attrs := []color.Attribute{color.Bold}
		if level == 1 {
			attrs = append(attrs, color.Underline)
		}
		return indent + Paint(true, inlineText(text, attrs), attrs...)
	}
	if strings.HasPrefix(t, ">") {
		q := strings.TrimPrefix(strings.TrimPrefix(t, ">"), " ")
		return indent + Paint(true, "▎ ", color.Faint) + Inline(q)
	}
	if rest, ok := bullet(t); ok {
		dot := "•"
		if len(indent) >= 2 {
			dot = "◦"
		}
		if strings.HasPrefix(rest, "[ ] ") {
			dot, rest = "☐", rest[4:]
		} else if strings.HasPrefix(rest, "[x] ") || strings.HasPrefix(rest, "[X] ") {
			dot, rest = "☑", rest[4:]
		}
		return indent + Paint(true, dot, color.Faint) + " " + Inline(rest)
	}
	if num, rest, ok := ordered(t); ok {
		return indent + Paint(true, num, color.Faint) + " " + Inline(rest)
	}
	return indent + Inline(t)
}

// listItem reports whether t starts a list item.
func listItem(t string) bool {
	_, b := bullet(t)
	_, _, o := ordered(t)
	return b || o
}

func heading(t string) (level int, text string, ok bool) {
	for level < len(t) && level < 7 && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ') {
		return 0, "", false
	}
	text = strings.TrimSpace(t[level:])
	text = strings.TrimSpace(strings.TrimRight(text, "#")) // closing hashes
	return level, text, true
}

func bullet(t string) (rest string, ok bool) {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return strings.TrimLeft(t[2:], " "), true
	}
	return "", false
}

func ordered(t string) (num, rest string, ok bool) {
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(t) || (t[i] != '.' && t[i] != ')') || t[i+1] != ' ' {
		return "", "", false
	}
	return t[:i+1], strings.TrimLeft(t[i+2:], " "), true
}

func isBreak(t string) bool {
	t = strings.ReplaceAll(t, " ", "")
	if len(t) < 3 {
		return false
	}
	c := t[0]
	return (c == '-' || c == '*' || c == '_') && strings.Trim(t, t[:1]) == ""
}

// tableRow splits a pipe table row ("| a | b |" or "a | b") into cells.
func tableRow(s string) ([]string, bool) {
	t := strings.TrimSpace(s)
	if !strings.Contains(t, "|") || !strings.HasPrefix(t, "|") {
		return nil, false
	}
	t = strings.TrimPrefix(t, "|")
	t = strings.TrimSuffix(t, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String())), true
}

// delimiterRow parses "|---|:--:|--:|" for a table of n columns.
func delimiterRow(s string, n int) ([]byte, bool) {
	cells, ok := tableRow(s)
	if !ok || len(cells) != n {
		return nil, false
	}
	al := make([]byte, n)
	for i, c := range cells {
		d := strings.Trim(c, ":")
		if d == "" || strings.Trim(d, "-") != "" {
			return nil, false
		}
		switch l, r := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":"); {
		case l && r:
			al[i] = 'c'
		case r:
			al[i] = 'r'
		default:
			al[i] = 'l'
		}
	}
	return al, true
}

// renderTable lays rows out in columns as wide as their widest cell.
func renderTable(rows [][]string, align []byte) []string {
	n := len(align)
	cells := make([][]string, len(rows))
	widths := make([]int, n)
	for i, r := range rows {
		cells[i] = make([]string, n)
		for j := 0; j < n; j++ {
			c := ""
			if j < len(r) {
				c = r[j]
			}
			if i == 0 {
				cells[i][j] = Paint(true, inlineText(c, []color.Attribute{color.Bold}), color.Bold)
			} else {
				cells[i][j] = Inline(c)
			}
			widths[j] = max(widths[j], Width(cells[i][j]))
		}
	}
	bar := Paint(true, "│", color.Faint)
	var out []string
	for i, r := range cells {
		var b strings.Builder
		for j, c := range r {
			if j > 0 {
				b.WriteString(" " + bar + " ")
			}
			gap := widths[j] - Width(c)
			switch align[j] {
			case 'r':
				b.WriteString(strings.Repeat(" ", gap) + c)
			case 'c':
				b.WriteString(strings.Repeat(" ", gap/2) + c + strings.Repeat(" ", gap-gap/2))
			default:
				b.WriteString(c + strings.Repeat(" ", gap))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
		if i == 0 {
			seps := make([]string, n)
			for j := range seps {
				seps[j] = strings.Repeat("─", widths[j])
			}
			out = append(out, Paint(true, strings.Join(seps, "─┼─"), color.Faint))
		}
	}
	return out
}

// Inline renders strong (**x**, __x__), emphasis (*x*, _x_), code spans
// (`x`) and links ([text](address), <address>) in one line.
func Inline(s string) string { return inlineText(s, nil) }

// inlineText is Inline inside a span already painted with outer: each
// inner span restores outer when it ends.
func inlineText(s string, outer []color.Attribute) string {
	if !strings.ContainsAny(s, "*_`[<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("*_`[]<>\\|#", s[i+1]) >= 0:
			b.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := run(s[i:], '`')
			if j := strings.Index(s[i+n:], s[i:i+n]); j >= 0 {
				code := s[i+n : i+n+j]
				if t := strings.TrimSpace(code); t != "" {
					code = t
				}
				b.WriteString(span(code, outer, color.FgHiYellow))
				i += n + j + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case (c == '*' || c == '_') && run(s[i:], c) >= 2:
			d := s[i : i+2]
			if j := strings.Index(s[i+2:], d); j > 0 && opens(s, i, 2) && s[i+2+j-1] != ' ' {
				inner := s[i+2 : i+2+j]
				b.WriteString(span(inlineText(inner, append(append([]color.Attribute{}, outer...), color.Bold)), outer, color.Bold))
				i += 2 + j + 2
				continue
			}
		case c == '*' || c == '_':
			if j := closing(s, i+1, c); j > i+1 && opens(s, i, 1) {
				inner := s[i+1 : j]
				b.WriteString(span(inlineText(inner, append(append([]color.Attribute{}, outer...), color.Italic)), outer, color.Italic))
				i = j + 1
				continue
			}
		case c == '[':
			if text, addr, n, ok := link(s[i:]); ok {
				b.WriteString(span(inlineText(text, append(append([]color.Attribute{}, outer...), color.Underline)), outer, color.Underline))
				if addr != text {
					b.WriteString(" " + span("("+addr+")", outer, color.Faint))
				}
				i += n
				continue
			}
		case c == '<':
			if j := strings.IndexByte(s[i:], '>'); j > 0 {
				addr := s[i+1 : i+j]
				if (strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://")) && !strings.ContainsAny(addr, " <") {
					b.WriteString(span(addr, outer, color.Underline))
					i += j + 1
					continue
				}
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// span paints s with attrs, then restores outer (the enclosing span's
// attributes: SGR 0 resets them all).
func span(s string, outer []color.Attribute, attrs ...color.Attribute) string {
	out := Paint(true, s, attrs...)
	if len(outer) > 0 {
		out += sgr(outer)
	}
	return out
}

// sgr is the escape sequence that sets attrs.
func sgr(attrs []color.Attribute) string {
	var b strings.Builder
	b.WriteString("\x1b[")
	for i, a := range attrs {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(itoa(int(a)))
	}
	b.WriteByte('m')
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// run counts the bytes equal to c at the start of s.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// opens reports whether a delimiter of n bytes at i can open a span: it is
// followed by a non-space, and an underscore is not inside a word
// (snake_case stays as written).
func opens(s string, i, n int) bool {
	if i+n >= len(s) || s[i+n] == ' ' {
		return false
	}
	if s[i] == '_' && i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// closing finds the single delimiter c closing a span opened before from.
func closing(s string, from int, c byte) int {
	for j := from; j < len(s); j++ {
		if s[j] == '`' { // a code span inside: skip it
			if k := strings.IndexByte(s[j+1:], '`'); k >= 0 {
				j += k + 1
				continue
			}
		}
		if s[j] != c || s[j-1] == ' ' {
			continue
		}
		if j+1 < len(s) && s[j+1] == c { // part of a double delimiter
			j++
			continue
		}
		if c == '_' && j+1 < len(s) {
			r, _ := utf8.DecodeRuneInString(s[j+1:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				continue
			}
		}
		return j
	}
	return -1
}

// link parses "[text](address)" at the start of s; n is its length.
func link(s string) (text, addr string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if i+1 >= len(s) || s[i+1] != '(' {
					return "", "", 0, false
				}
				j := strings.IndexByte(s[i+2:], ')')
				if j < 0 {
					return "", "", 0, false
				}
				addr = strings.TrimSpace(s[i+2 : i+2+j])
				if t, _, found := strings.Cut(addr, " \""); found { // a title
					addr = t
				}
				if addr == "" || strings.ContainsAny(addr, " ") {
					return "", "", 0, false
				}
				return s[1:i], addr, i + 2 + j + 1, true
			}
		}
	}
	return "", "", 0, false
}

// escapeEnd is the index of the last byte of the escape sequence that
// starts at s[i] (an ESC): the final byte of a CSI sequence, or the byte
// after a lone ESC.
func escapeEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '[' {
		j++
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
	}
	return j
}

// Width is the number of terminal columns s takes: SGR sequences take
// none, East Asian wide and fullwidth characters two.
func Width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = escapeEnd(s, i) + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// runeWidth is 2 for East Asian wide and fullwidth characters and the
// emoji blocks, 0 for combining marks and zero-width characters, else 1.
func runeWidth(r rune) int {
	switch {
	case r == 0x200b || r == 0x200c || r == 0x200d || r == 0xfeff || unicode.Is(unicode.Mn, r):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// MarkdownText renders a whole reply (untrusted: it is made Inert first)
// as Markdown, for a coloured terminal.
func MarkdownText(text string) string {
	var m Markdown
	var out []string
	for _, l := range strings.Split(Inert(text), "\n") {
		out = append(out, m.Line(l)...)
	}
	return strings.Join(append(out, m.Flush()...), "\n")
}
