package conversation

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// scanLines returns real transcript lines: the recorded 2.1.328 fixture and
// the shared corpus when it is present beside the clone.
func scanLines(tb testing.TB) [][]byte {
	files := []string{"../agents/testdata/claude-2.1.328-chat.jsonl"}
	m, _ := filepath.Glob("../../shared/corpus/marot-spotter/test/fixtures/transcripts/*.jsonl")
	files = append(files, m...)
	var lines [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		tb.Skip("no transcript lines")
	}
	return lines
}

// BenchmarkTailScan reads a transcript of about 64 MB built from real lines
// from its start to its end (the work of `tail --from-start --no-follow`
// without the output).
func BenchmarkTailScan(b *testing.B) {
	lines := scanLines(b)
	p := filepath.Join(b.TempDir(), "t.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var size int64
	for i := 0; size < 64<<20; i++ {
		l := lines[i%len(lines)]
		w.Write(l)
		w.WriteByte('\n')
		size += int64(len(l) + 1)
	}
	w.Flush()
	f.Close()
	b.SetBytes(size)
	for b.Loop() {
		n := 0
		err := Tail(context.Background(), TailOptions{Path: p, OnActivity: func(_ int64, acts []events.Activity) bool {
			n += len(acts)
			return true
		}})
		if err != nil || n == 0 {
			b.Fatal(n, err)
		}
	}
}
