package events

import (
	"strings"
	"testing"
)

// scanStringRef is JSONString one byte at a time, as the JSON grammar
// reads it.
func scanStringRef(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 5
			default:
				return -1
			}
		}
	}
	return -1
}

// Every byte value, at every place of a word and across word boundaries,
// alone and after a backslash: the word-at-a-time scanner finds the same
// end as the byte-at-a-time grammar.
func TestScanStringEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 20; pos++ {
			for _, prefix := range []string{"", `\`, `\u00`} {
				for _, tail := range []string{`bbbbbbbbbbbbbbbbb"`, `"`, ``, `\"x"`, `\u0041"`} {
					s := []byte(`"` + strings.Repeat("a", pos) + prefix + string([]byte{byte(c)}) + tail)
					if got, want := JSONString(s, 0), scanStringRef(s, 0); got != want {
						t.Fatalf("JSONString(%q) = %d, want %d", s, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkScanString(b *testing.B) {
	s := []byte(`"` + strings.Repeat(`line of tool output with some text \"quoted\" here\n`, 120) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if e := JSONString(s, 0); e != len(s) {
			b.Fatal(e)
		}
	}
}
