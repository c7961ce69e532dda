package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// seedLines returns real transcript lines to seed fuzzers with: the
// recorded 2.1.328 fixtures, and short lines of the corpus in testdata/corpus.
func seedLines(tb testing.TB, max int) [][]byte {
	tb.Helper()
	files := []string{"testdata/claude-2.1.328-chat.jsonl", todayFixture}
	m, _ := filepath.Glob(filepath.Join(corpusDir, "marot-spotter/test/fixtures/transcripts/*.jsonl"))
	if len(m) == 0 {
		tb.Fatalf("no transcripts under %s (testdata/corpus is part of the repository)", corpusDir)
	}
	files = append(files, m...)
	var out [][]byte
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) == 0 || len(l) > 4096 {
				continue
			}
			// One seed per line type, subtype and content shape: enough
			// variety without thousands of near-copies.
			var k struct {
				Type, Subtype string
				Message       struct{ Content json.RawMessage }
			}
			_ = json.Unmarshal(l, &k)
			shape := k.Type + "/" + k.Subtype + "/" + string(bytes.SplitN(append(k.Message.Content, ' '), []byte(":"), 3)[0])
			if len(shape) > 60 {
				shape = shape[:60]
			}
			if seen[shape] && !strings.Contains(f, "2.1.328") {
				continue
			}
			seen[shape] = true
			out = append(out, l)
			if len(out) >= max {
				return out
			}
		}
	}
	return out
}

// FuzzParseTranscriptLine: any line, any bytes: no panic, the documented
// contract (only a line that is not JSON is an error; JSON of any shape
// yields activities or nothing), and well-formed activities.
func FuzzParseTranscriptLine(f *testing.F) {
	for _, l := range seedLines(f, 200) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":5}`))
	f.Add([]byte(`{"type":"assistant","message":{"content":"x"}}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte("{\"type\":\"user\",\"message\":{\"content\":\"\xff\"}}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		acts, err := ParseLine(line)
		if err != nil {
			if json.Valid(line) {
				t.Fatalf("valid JSON %q reported as an error: %v", line, err)
			}
			if len(acts) != 0 {
				t.Fatalf("error with activities: %v", acts)
			}
			return
		}
		for _, a := range acts {
			if a.Source != Source {
				t.Fatalf("activity source %q", a.Source)
			}
			if a.Kind == "" {
				t.Fatalf("activity without a kind from %q", line)
			}
			if _, err := json.Marshal(a); err != nil {
				t.Fatalf("activity does not encode: %v", err)
			}
			if a.Kind == events.ActTool && strings.ContainsAny(a.Detail, "\n") {
				t.Fatalf("tool detail is not one line: %q", a.Detail)
			}
		}
	})
}
