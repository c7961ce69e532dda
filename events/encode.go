package events

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendJSON appends e to dst as one compact JSON object, the same object
// json.Marshal would produce (keys in struct order, refs and meta keys
// sorted, empty refs and meta left out) except that <, > and & are not
// escaped and DEL, C1, bidi and zero-width characters are (as EscapeJSON
// does). It is the fast path of replay --json.
func AppendJSON(dst []byte, e Event) []byte {
	var kbuf [8]string
	dst = append(dst, `{"schemaVersion":`...)
	dst = strconv.AppendInt(dst, int64(e.SchemaVersion), 10)
	dst = append(dst, `,"id":`...)
	dst = appendString(dst, e.ID)
	dst = append(dst, `,"ts":`...)
	dst = appendString(dst, e.TS)
	dst = append(dst, `,"sessionId":`...)
	dst = appendString(dst, e.SessionID)
	dst = append(dst, `,"role":`...)
	dst = appendString(dst, string(e.Role))
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, string(e.Kind))
	dst = append(dst, `,"text":`...)
	dst = appendString(dst, e.Text)
	if len(e.Refs) > 0 {
		dst = append(dst, `,"refs":{`...)
		for i, k := range sortedKeys(e.Refs, &kbuf) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, e.Refs[k])
		}
		dst = append(dst, '}')
	}
	if len(e.Meta) > 0 {
		dst = appendMeta(dst, e.Meta)
	}
	return append(dst, '}')
}

// sortedKeys returns m's keys sorted, in buf when they fit.
func sortedKeys[V any](m map[string]V, buf *[8]string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendString(dst, v)
	case bool:
		return strconv.AppendBool(dst, v)
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return appendFloat(dst, v)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, EscapeJSON(b)...)
}

// appendFloat formats f as encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendString appends s quoted as a JSON string, as encoding/json does
// with HTML escaping off, plus EscapeJSON's escapes.
func appendString(dst []byte, s string) []byte { return appendJSONString(dst, s, false) }

// jsonSafe and htmlSafe mark the ASCII bytes encoding/json writes as they
// are, with HTML escaping off and on.
var jsonSafe, htmlSafe = func() (j, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		j[c] = c != '"' && c != '\\' && c != 0x7f
		h[c] = j[c] && c != '<' && c != '>' && c != '&'
	}
	return j, h
}()

// appendJSONString appends s quoted as encoding/json quotes it (\b \f \n
// \r \t short forms, other control bytes as \u00XX, invalid UTF-8 as
// \ufffd, U+2028/U+2029 escaped, and <, >, & as \u003c, \u003e, \u0026
// when html is set), and DEL and every HiddenControl as \uXXXX, as
// EscapeJSON would after it.
func appendJSONString(dst []byte, s string, html bool) []byte {
	safe := &jsonSafe
	if html {
		safe = &htmlSafe
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain ASCII bytes at a time (no quote, backslash,
		// control or non-ASCII byte, and no <, >, & with html).
		for i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			q, bs, del := x^('"'*ones), x^('\\'*ones), x^(0x7f*ones)
			m := (q-ones)&^q | (bs-ones)&^bs | (del-ones)&^del | (x-0x20*ones)&^x | x
			if html {
				lt, gt, amp := x^('<'*ones), x^('>'*ones), x^('&'*ones)
				m |= (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
			}
			if m&highs != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' || HiddenControl(r) {
			dst = append(dst, s[start:i]...)
			dst = appendUEscape(dst, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendMeta appends `,"meta":` and the meta object as a map of its
// members encodes: keys sorted (the last of a repeated key wins), values
// as encoding/json writes what it decodes them to. A meta that is already
// in that form, as relay-baton writes it, is copied as it is; one that
// does not decode as an object is left out.
func appendMeta(dst []byte, meta MetaJSON) []byte {
	if canonicalMeta(meta) {
		dst = append(dst, `,"meta":`...)
		return append(dst, meta...)
	}
	return appendMetaSorted(dst, meta)
}

// canonicalMeta reports whether meta is byte for byte what
// appendMetaSorted would write for it: compact, its keys plain and in
// increasing order, its values strings without escapes or characters that
// appendString escapes, numbers as appendFloat writes them, true, false or
// null.
// It reads meta once without allocating.
func canonicalMeta(b []byte) bool {
	if len(b) < 3 || b[0] != '{' {
		return false
	}
	var prev []byte
	for i := 1; ; {
		end, escaped := scanString(b, i)
		if b[i] != '"' || end < 0 || escaped || end >= len(b) || b[end] != ':' {
			return false
		}
		key := b[i+1 : end-1]
		if prev != nil && bytes.Compare(prev, key) >= 0 {
			return false
		}
		prev = key
		if i = end + 1; i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			end, escaped = scanString(b, i)
			if end < 0 || escaped || !plainText(b[i+1:end-1]) {
				return false
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			if i = canonicalNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			i = JSONLiteral(b, i, "true")
		case c == 'f':
			i = JSONLiteral(b, i, "false")
		case c == 'n':
			i = JSONLiteral(b, i, "null")
		default:
			return false // an object or an array: re-encoded
		}
		if i < 0 || i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return i == len(b)-1
		}
		if b[i] != ',' || i+1 >= len(b) {
			return false
		}
		i++
	}
}

// canonicalNumber returns the index after the number at b[i] when
// appendFloat writes the float64 it decodes to back as the same bytes;
// else -1.
func canonicalNumber(b []byte, i int) int {
	end, risky := JSONNumber(b, i)
	if end < 0 || risky {
		return -1
	}
	f, err := strconv.ParseFloat(string(b[i:end]), 64)
	var buf [32]byte
	if err != nil || !bytes.Equal(appendFloat(buf[:0], f), b[i:end]) {
		return -1
	}
	return end
}

// plainText reports whether appendString writes the unescaped string body
// s as it is: valid UTF-8 without DEL, U+2028, U+2029 or a HiddenControl.
func plainText(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' || HiddenControl(r) {
			return false
		}
		i += size
	}
	return true
}

// appendMetaSorted is appendMeta for any meta: it decodes the members and
// writes them again.
func appendMetaSorted(dst []byte, meta MetaJSON) []byte {
	type member struct {
		key string
		v   any
	}
	var buf [16]member
	members := buf[:0]
	d := decoder{b: meta, s: string(meta)}
	d.ws()
	if d.peek() != '{' {
		return dst
	}
	err := d.members(true, func(k string, _ bool) error {
		v, err := d.value(true)
		members = append(members, member{k, v})
		return err
	})
	if err != nil {
		return dst
	}
	slices.SortStableFunc(members, func(x, y member) int { return strings.Compare(x.key, y.key) })
	dst = append(dst, `,"meta":{`...)
	n := 0
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue // a later value of the same key wins
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, m.key)
		dst = append(dst, ':')
		dst = appendValue(dst, m.v)
	}
	return append(dst, '}')
}
