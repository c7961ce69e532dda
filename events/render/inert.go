package render

import (
	"strings"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/events"
)

// Inert returns s made safe to print on a terminal: every C0 control
// character but newline and tab, DEL, every C1 control character (U+0080 to
// U+009F) and every byte that is not valid UTF-8 (a raw 0x9b is CSI to an
// 8-bit terminal) is replaced by a visible form: caret notation for C0 and
// DEL (ESC is ^[, BEL ^G, CR ^M, DEL ^?), \u0085 for C1, \x9b for a stray
// byte; every bidi control and zero-width character (events.HiddenControl:
// U+202E can make text read backwards, U+200B hides inside a word) is shown
// by its code point, <U+202E>. Everything else, including newlines and
// tabs, is kept, so a renderer can still lay out lines. s is returned as is
// (no allocation) when it holds nothing to replace.
//
// It is the one sanitizer of relay-baton: every renderer passes untrusted
// text (agent output, transcript lines, chat messages, tool commands,
// registration paths) through it before it reaches a terminal or the page.
func Inert(s string) string {
	i := firstUnsafe(s, true)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendInert(b, s[i:], true))
}

// InertLine is Inert for one-line places (a tool's command, a path, a
// label): a newline is shown as ⏎ too.
func InertLine(s string) string {
	i := firstUnsafe(s, false)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	return string(appendInert(b, s[i:], false))
}

// AppendInert appends Inert(s) to dst.
func AppendInert(dst []byte, s string) []byte {
	i := firstUnsafe(s, true)
	dst = append(dst, s[:i]...)
	return appendInert(dst, s[i:], true)
}

const lo7, hi1 = 0x0101010101010101, 0x8080808080808080

// firstUnsafe returns the index of the first byte that needs a look (a
// control byte, or any non-ASCII byte: it may start a C1 character or be
// invalid), or len(s). Newlines pass when keepNL; tabs always.
func firstUnsafe(s string, keepNL bool) int {
	i := 0
	// Eight bytes at a time while all are printable ASCII.
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if ((x-0x20*lo7)|x|(x+lo7))&hi1 != 0 { // a byte < 0x20, >= 0x80, or 0x7f
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' && keepNL {
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && !events.HiddenControl(r) {
				i += size - 1
				continue
			}
		}
		return i
	}
	return len(s)
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

const hexDigits, hexUpper = "0123456789abcdef", "0123456789ABCDEF"

func appendInert(b []byte, s string, keepNL bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\t':
			b = append(b, c)
			i++
		case c == '\n':
			if keepNL {
				b = append(b, c)
			} else {
				b = append(b, "⏎"...)
			}
			i++
		case c < 0x20 || c == 0x7f:
			b = append(b, '^', c^0x40)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			case isC1(r):
				b = append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
			case events.HiddenControl(r):
				b = append(b, '<', 'U', '+', hexUpper[r>>12&0xf], hexUpper[r>>8&0xf], hexUpper[r>>4&0xf], hexUpper[r&0xf], '>')
			default:
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return b
}

// Cut is the one truncation helper: s on one line (runs of white space,
// newlines included, folded into one space, ends trimmed), cut to at most n
// runes with a trailing "…" when longer. It does not sanitize: pass the
// result through Inert or InertLine before printing it.
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if !needsFold(s) {
		if utf8.RuneCountInString(s) <= n {
			return s
		}
	} else {
		s = strings.Join(strings.Fields(s), " ")
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// needsFold reports whether s has white space other than single inner
// spaces.
func needsFold(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c >= utf8.RuneSelf {
			return true // non-ASCII may be Unicode white space: let Fields decide
		}
		if c == ' ' {
			if prevSpace {
				return true
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	return false
}
