package events

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendActivityJSON appends a as json.Marshal encodes it (keys in struct
// order, empty fields left out, <, > and & escaped as \u003c, \u003e,
// \u0026), byte for byte, without reflection: the fast path of
// `tail --json` over big transcripts. It fails where json.Marshal fails (a
// time outside years 0-9999), leaving dst as it was. Activities with usage
// go through encoding/json.
func AppendActivityJSON(dst []byte, a Activity) ([]byte, error) {
	if a.Usage != nil {
		b, err := json.Marshal(a)
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	var stamp []byte
	if !a.Time.IsZero() {
		var err error
		if stamp, err = a.Time.MarshalJSON(); err != nil {
			return dst, &json.MarshalerError{Type: reflect.TypeFor[time.Time](), Err: err}
		}
	}
	dst = append(dst, `{"source":`...)
	dst = appendHTMLString(dst, a.Source)
	dst = append(dst, `,"kind":`...)
	dst = appendHTMLString(dst, string(a.Kind))
	field := func(name, v string) {
		if v != "" {
			dst = append(dst, name...)
			dst = appendHTMLString(dst, v)
		}
	}
	field(`,"text":`, a.Text)
	field(`,"tool":`, a.Tool)
	field(`,"detail":`, a.Detail)
	if a.ExitCode != nil {
		dst = append(dst, `,"exitCode":`...)
		dst = strconv.AppendInt(dst, int64(*a.ExitCode), 10)
	}
	if a.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	field(`,"stopReason":`, a.StopReason)
	field(`,"id":`, a.ID)
	field(`,"session":`, a.Session)
	if stamp != nil {
		dst = append(dst, `,"time":`...)
		dst = append(dst, stamp...)
	}
	return append(dst, '}'), nil
}

// htmlSafe marks the ASCII bytes encoding/json writes as they are (with
// HTML escaping on).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendHTMLString appends s quoted as encoding/json does with HTML
// escaping (json.Marshal, json.Encoder's default).
func appendHTMLString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain bytes at a time: no quote, backslash, <, >, &,
		// control or non-ASCII byte.
		for i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			q, bs, lt, gt, amp := x^('"'*lo7), x^('\\'*lo7), x^('<'*lo7), x^('>'*lo7), x^('&'*lo7)
			if ((q-lo7)&^q|(bs-lo7)&^bs|(lt-lo7)&^lt|(gt-lo7)&^gt|(amp-lo7)&^amp|(x-0x20*lo7)&^x|x)&hi1 != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
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
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
