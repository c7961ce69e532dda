package events

import "unicode/utf8"

// HiddenControl reports whether r is a character that acts on a terminal or
// changes how text reads without showing itself, beyond the C0 controls
// and DEL: a C1 control (U+0080-U+009F, U+009B is CSI to xterm), a bidi
// control (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) or a
// zero-width character (U+200B-U+200D, U+2060, U+FEFF). render.Inert shows
// them as <U+XXXX>; every JSON output escapes them as \uXXXX.
func HiddenControl(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r < 0x61c:
		return false
	}
	switch r {
	case 0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f,
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
		0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff:
		return true
	}
	return false
}

// EscapeJSON returns the JSON text b with every DEL, C1, bidi and
// zero-width character written as a \uXXXX escape (encoding/json already
// escapes the C0 controls): the one rule for JSON relay-baton prints, so a
// terminal showing it acts on none of them. b must be valid JSON: outside
// strings JSON holds only ASCII, so any such character is inside a string
// and its escape means the same text. b is returned as is when it holds
// nothing to escape.
func EscapeJSON(b []byte) []byte {
	i := 0
	for ; i < len(b); i++ {
		if c := b[i]; c == 0x7f {
			break
		} else if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if HiddenControl(r) {
				break
			}
			i += size - 1
		}
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				out = append(out, `\u007f`...)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if HiddenControl(r) {
			out = appendUEscape(out, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// appendUEscape appends \uXXXX for a rune of the Basic Multilingual Plane.
func appendUEscape(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
