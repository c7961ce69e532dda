package events

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is relay-baton's one JSON scanner: the pieces the hand-written
// readers share (the event decoder here, the transcript parser's fast path
// and its line filter). Each function takes a line and an index into it and
// returns the index just after what it read, or -1 when the JSON there is
// not what it expects. Bytes are examined eight at a time where a value can
// be long (strings, skipped nested values, keys).

const (
	ones  = 0x0101010101010101 // 0x01 in every byte of a word
	highs = 0x8080808080808080 // the high bit of every byte of a word
)

// zeroBytes has the high bit set at the lowest byte of x that is zero (and
// possibly at higher ones: only the lowest set bit is exact).
func zeroBytes(x uint64) uint64 { return (x - ones) &^ x & highs }

// word reads the eight bytes at b[i:] as one little-endian word.
func word(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// JSONSpace returns the index of the first byte from b[i] on that is not
// JSON whitespace. Compact JSON has none: one compare decides that case.
func JSONSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// JSONString validates the string whose opening quote is at b[i] and
// returns the index after its closing quote (-1 when invalid: unterminated,
// a control byte, a bad escape). Invalid UTF-8 is accepted, as
// encoding/json accepts it (and replaces it when decoding).
//
// Eight bytes are examined at a time for a quote, a backslash or a control
// byte (not sixteen: in tool output a backslash comes every 30 bytes or so,
// and a wider step mostly looks at bytes it must look at again).
func JSONString(b []byte, i int) int {
	i++
	for {
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i : i+8])
			// x ^ 0x02 maps '"' (0x22) to 0x20 and the control bytes
			// among themselves, so one test for bytes below 0x21 finds
			// both; a second finds a backslash.
			y := x ^ (ones * 0x02)
			bs := x ^ (ones * '\\')
			m := ((y-ones*0x21)&^y | (bs-ones)&^bs) & highs
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
				i++
			}
			if i >= len(b) {
				return -1
			}
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			return -1 // a control byte
		}
	}
}

// scanString is JSONString that also says whether the string has escapes.
func scanString(b []byte, i int) (end int, escaped bool) {
	end = JSONString(b, i)
	return end, end >= 0 && bytes.IndexByte(b[i+1:end-1], '\\') >= 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// JSONStringEnd returns the index just after the string starting at b[i]
// ('"'), or -1 when it does not end, without validating it. It looks for
// quotes alone (the first eight bytes as one word, then with
// bytes.IndexByte, at memchr speed) and takes a quote for the end when an
// even number of backslashes precede it (in valid JSON an escaped quote has
// an odd run before it), so the backslashes of a string cost nothing unless
// they sit before a quote.
func JSONStringEnd(b []byte, i int) int {
	i++
	for {
		q := -1
		if i+8 <= len(b) {
			if m := zeroBytes(word(b, i) ^ (ones * '"')); m != 0 {
				q = i + bits.TrailingZeros64(m)>>3
			} else {
				i += 8
			}
		}
		if q < 0 {
			if i >= len(b) {
				return -1
			}
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return -1
			}
			q += i
		}
		j := q - 1
		for b[j] == '\\' {
			j--
		}
		if (q-1-j)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// JSONSkip returns the index after the value at b[i], or -1, without
// validating it: exact for valid JSON (see JSONStringEnd and JSONSkipNested).
func JSONSkip(b []byte, i int) int {
	switch b[i] {
	case '"':
		return JSONStringEnd(b, i)
	case '{', '[':
		return JSONSkipNested(b, i)
	}
	// A number, true, false or null.
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		if b[i] == '"' || b[i] == '{' || b[i] == '[' {
			return -1
		}
		i++
	}
	return i
}

// JSONSkipNested returns the index after the object or array at b[i],
// found by counting brackets outside strings (exact for valid JSON), or -1
// when the line ends first. Outside strings eight bytes are examined at a
// time for a quote or a bracket ('[' | 0x20 is '{' and ']' | 0x20 is '}', so
// two compares find all four); strings are passed over by JSONStringEnd.
func JSONSkipNested(b []byte, i int) int {
	depth := 0
	for {
		// Outside strings.
		for i+8 <= len(b) {
			x := word(b, i)
			y := x | ones*0x20
			if m := zeroBytes(x^(ones*'"')) | zeroBytes(y^(ones*'{')) | zeroBytes(y^(ones*'}')); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] != '"' && b[i]|0x20 != '{' && b[i]|0x20 != '}' {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			if i = JSONStringEnd(b, i); i < 0 {
				return -1
			}
		case c|0x20 == '{':
			depth++
			i++
		default:
			depth--
			i++
			if depth == 0 {
				return i
			}
		}
	}
}

// JSONNext reads what follows a member or an element that ends at b[end]:
// a comma (it returns the index of the next one, past whitespace) or the
// closing bracket (the index after it, and done); -1 for anything else.
func JSONNext(b []byte, end int, closing byte) (next int, done bool) {
	i := JSONSpace(b, end)
	if i >= len(b) {
		return -1, false
	}
	switch b[i] {
	case ',':
		return JSONSpace(b, i+1), false
	case closing:
		return i + 1, true
	}
	return -1, false
}

// JSONStringValue decodes raw, one JSON value, when it is a string; ok is
// false for anything else (and for nothing).
func JSONStringValue(raw []byte) (s string, ok bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	_ = json.Unmarshal(raw, &s)
	return s, true
}

// JSONLiteral returns the index after lit (true, false or null) at b[i],
// or -1 when b does not hold it there.
func JSONLiteral(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// JSONNumber validates a JSON number at b[i] and returns the index after
// it (-1 when it is not one); risky when it has an exponent or is very long
// (a float64 may not hold it).
func JSONNumber(b []byte, i int) (end int, risky bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return -1, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		risky = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1, false
		}
	}
	return i, risky || i-start > 300
}

// JSONPlainKey reports whether k, a key's bytes between its quotes, has no
// escape and no non-ASCII byte: a key a hand-written reader can compare as
// it is (encoding/json could match another to a field in ways it does not
// follow).
func JSONPlainKey(k []byte) bool {
	for len(k) >= 8 {
		x := word(k, 0)
		if x&highs|zeroBytes(x^(ones*'\\')) != 0 {
			return false // a byte >= 0x80, or a backslash (zeroBytes has no false positive without a true one)
		}
		k = k[8:]
	}
	for _, c := range k {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// JSONKeyFolds reports whether key equals one of names ignoring ASCII case
// (encoding/json matches field names that way); the caller has already
// matched the exact names.
func JSONKeyFolds(key []byte, names ...string) bool {
	for _, n := range names {
		// The first bytes' ASCII case first: a cheap necessary condition.
		if len(n) == len(key) && len(n) > 0 && key[0]|0x20 == n[0]|0x20 && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// JSONRune decodes the rune at raw[i] of a validated JSON string body as
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD) and
// returns the index after it.
func JSONRune(raw []byte, i int) (rune, int) {
	c := raw[i]
	if c < utf8.RuneSelf {
		if c != '\\' {
			return rune(c), i + 1
		}
		switch raw[i+1] {
		case 'b':
			return '\b', i + 2
		case 'f':
			return '\f', i + 2
		case 'n':
			return '\n', i + 2
		case 'r':
			return '\r', i + 2
		case 't':
			return '\t', i + 2
		case 'u':
			rr := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(rr) {
				rr1 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					rr1 = hex4(raw[i+2:])
				}
				if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
					return dec, i + 6
				}
				return unicode.ReplacementChar, i
			}
			return rr, i
		default: // '"', '\\', '/'
			return rune(raw[i+1]), i + 2
		}
	}
	r, size := utf8.DecodeRune(raw[i:])
	return r, i + size
}

// hex4 reads four (validated) hex digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// JSONUnquote decodes a validated JSON string body (the bytes between the
// quotes) as encoding/json does.
func JSONUnquote(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			j = len(raw)
		} else {
			j += i
		}
		if seg := raw[i:j]; utf8.Valid(seg) {
			out = append(out, seg...)
			i = j
		} else {
			for i < j {
				r, size := utf8.DecodeRune(raw[i:j])
				out = utf8.AppendRune(out, r)
				i += size
			}
		}
		if i < len(raw) {
			r, next := JSONRune(raw, i)
			out = utf8.AppendRune(out, r)
			i = next
		}
	}
	return string(out)
}
