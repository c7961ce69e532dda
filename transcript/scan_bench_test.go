package transcript

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// scanLines returns real transcript lines: the recorded 2.1.328 fixtures
// (a chat, and today's sessions: stream-json and the TUI) and the shared
// corpus copied into testdata/corpus (a missing file fails).
func scanLines(tb testing.TB) [][]byte {
	tb.Helper()
	m, _ := filepath.Glob("../testdata/corpus/marot-spotter/test/fixtures/transcripts/*.jsonl")
	if len(m) == 0 {
		tb.Fatal("no transcripts under ../testdata/corpus (testdata/corpus is part of the repository)")
	}
	return readLines(tb, append([]string{"testdata/claude-2.1.328-chat.jsonl", "testdata/claude-2.1.328-today.jsonl"}, m...)...)
}

// todayLines returns the lines of today's 2.1.328 fixture alone.
func todayLines(tb testing.TB) [][]byte {
	return readLines(tb, "testdata/claude-2.1.328-today.jsonl")
}

func readLines(tb testing.TB, files ...string) [][]byte {
	var lines [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		tb.Fatalf("no transcript lines in %v (transcript/testdata is in the repo)", files)
	}
	return lines
}

// BenchmarkTailScan reads a transcript of about 64 MB built from real lines
// from its start to its end (the work of `tail --from-start --no-follow`
// without the output); BenchmarkTailScanToday the same built from today's
// 2.1.328 sessions alone (large attachment and api-request-* lines).
func BenchmarkTailScan(b *testing.B)      { benchTailScan(b, scanLines(b)) }
func BenchmarkTailScanToday(b *testing.B) { benchTailScan(b, todayLines(b)) }

func benchTailScan(b *testing.B, lines [][]byte) {
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

// TestTailScanInOrder: a transcript of several reads (parsed in parallel
// when there are CPUs to spare), with junk and an over-long line among the
// real lines, tails to exactly what parsing it line by line in order gives:
// the same activities with the same end offsets, and the same skips.
func TestTailScanInOrder(t *testing.T) {
	lines := scanLines(t)
	p := filepath.Join(t.TempDir(), "t.jsonl")
	var data []byte
	for i := 0; len(data) < 3*readSize+readSize/3; i++ {
		data = append(append(data, lines[i%len(lines)]...), '\n')
		switch i {
		case 100:
			data = append(data, "not json\n"...)
		case 2000:
			data = append(append(append(data, `{"type":"assistant","message":{"content":"`...), bytes.Repeat([]byte("z"), MaxLine)...), "\"}}\n"...)
		}
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	type got struct {
		end  int64
		acts []events.Activity
		skip string
	}
	var tail []got
	err := Tail(context.Background(), TailOptions{Path: p,
		OnActivity: func(end int64, acts []events.Activity) bool {
			tail = append(tail, got{end: end, acts: append([]events.Activity(nil), acts...)})
			return true
		},
		OnSkip: func(off int64, why string) { tail = append(tail, got{end: off, skip: why}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []got
	var off int64
	ref := tailer{}
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		off += int64(len(l))
		l = bytes.TrimSuffix(l, []byte("\n"))
		if len(l) > MaxLine {
			want = append(want, got{end: off, skip: "line over 8 MB skipped"})
			continue
		}
		acts, err := ParseLine(l)
		if err != nil {
			want = append(want, got{end: off, skip: err.Error()})
			continue
		}
		if acts = ref.collapseDone(acts); len(acts) > 0 {
			want = append(want, got{end: off, acts: acts})
		}
	}
	if len(tail) != len(want) {
		t.Fatalf("tail gave %d callbacks, line by line %d", len(tail), len(want))
	}
	for i := range want {
		if tail[i].end != want[i].end || tail[i].skip != want[i].skip || !reflect.DeepEqual(tail[i].acts, want[i].acts) {
			t.Fatalf("callback %d differs:\ntail: %+v\nwant: %+v", i, tail[i], want[i])
		}
	}
}

// TestTailScanStops: OnActivity asking to stop in the middle of a read
// that is delivered while the next one parses ends the scan there: no
// callback after it, and the activities before it are those of the lines
// before it, in order.
func TestTailScanStops(t *testing.T) {
	lines := scanLines(t)
	p := filepath.Join(t.TempDir(), "t.jsonl")
	var data []byte
	for i := 0; len(data) < 4*readSize; i++ {
		data = append(append(data, lines[i%len(lines)]...), '\n')
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var all []int64
	if err := Tail(context.Background(), TailOptions{Path: p, OnActivity: func(end int64, _ []events.Activity) bool {
		all = append(all, end)
		return true
	}}); err != nil {
		t.Fatal(err)
	}
	// Stop at the first activity past the second read: its items are the
	// ones held while the third read parses.
	stopAt := -1
	for i, end := range all {
		if end > 2*readSize {
			stopAt = i
			break
		}
	}
	if stopAt < 0 {
		t.Fatalf("no activity past %d bytes in %d bytes", 2*readSize, len(data))
	}
	var got []int64
	if err := Tail(context.Background(), TailOptions{Path: p, OnActivity: func(end int64, _ []events.Activity) bool {
		got = append(got, end)
		return len(got) <= stopAt
	}}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all[:stopAt+1]) {
		t.Fatalf("stopped after %d callbacks, want %d (the first %d of a full scan)", len(got), stopAt+1, stopAt+1)
	}
}

// BenchmarkLineFate measures the per-line work of a scan without the I/O:
// skipLine, then the parser for the lines it does not pass over.
func BenchmarkLineFate(b *testing.B) {
	for _, c := range []struct {
		name  string
		lines [][]byte
	}{{"corpus", scanLines(b)}, {"today", todayLines(b)}} {
		b.Run(c.name, func(b *testing.B) {
			var size int64
			for _, l := range c.lines {
				size += int64(len(l) + 1)
			}
			b.SetBytes(size)
			for b.Loop() {
				for _, l := range c.lines {
					if !skipLine(l) {
						ParseLine(l)
					}
				}
			}
		})
	}
}

// BenchmarkSkipLine: the pre-filter alone on the lines of today's fixture
// it passes over (attachment, api-request-*: most of the bytes).
func BenchmarkSkipLine(b *testing.B) {
	var lines [][]byte
	var size int64
	for _, l := range todayLines(b) {
		if skipLine(l) {
			lines = append(lines, l)
			size += int64(len(l) + 1)
		}
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, l := range lines {
			if !skipLine(l) {
				b.Fatal("not skipped")
			}
		}
	}
}
