package subprocess

import (
	"strings"
	"testing"
)

// maxLine is the agents' output line cap.
const maxLine = 16 << 20

func TestLineReaderLongLines(t *testing.T) {
	big := strings.Repeat("x", 300<<10)    // 300 KB: delivered
	huge := strings.Repeat("y", maxLine+5) // over the cap: skipped, measured
	in := "a\r\n" + big + "\n" + huge + "\n\nlast-no-newline"
	var lines []string
	var skipped []int
	readLines(strings.NewReader(in), maxLine, func(l []byte, tooLong int) {
		if tooLong > 0 {
			skipped = append(skipped, tooLong)
			return
		}
		lines = append(lines, string(l))
	})
	if len(lines) != 4 || lines[0] != "a" || lines[1] != big || lines[2] != "" || lines[3] != "last-no-newline" {
		t.Fatalf("got %d lines: %.20q", len(lines), lines)
	}
	if len(skipped) != 1 || skipped[0] != maxLine+6 {
		t.Fatalf("skipped %v", skipped)
	}
}
