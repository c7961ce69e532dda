package agents

import (
	"strings"
	"testing"
)

func BenchmarkScanString(b *testing.B) {
	s := []byte(`"` + strings.Repeat(`line of tool output with some text \"quoted\" here\n`, 120) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if e := scanString(s, 0); e != len(s) {
			b.Fatal(e)
		}
	}
}
