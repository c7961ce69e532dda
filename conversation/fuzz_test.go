package conversation

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/agents"
)

// FuzzInboxMessage: any inbox file content is a usable message or a reason
// to move it aside, never a panic; an accepted message has text within the
// cap and a sender.
func FuzzInboxMessage(f *testing.F) {
	for _, s := range []string{
		`{"id":"a1b2c3d4","from":"room","text":"hello","createdAt":"2026-11-30T04:48:55.217Z"}`,
		`{"id":"a1b2c3d4","text":"from the dashboard"}`,
		`{"text":"   "}`,
		`{"text":5}`,
		`{"text":"x","createdAt":"yesterday"}`,
		`{"text":"` + strings.Repeat("a", MaxMessageBytes+1) + `"}`,
		"{\"text\":\"\xff\xfe\"}",
		`not json`,
		``,
		`null`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, reason := parseMessage(b)
		if reason != "" {
			if m.Text != "" {
				t.Fatalf("rejected (%s) but returned text", reason)
			}
			return
		}
		if strings.TrimSpace(m.Text) == "" || len(m.Text) > MaxMessageBytes || m.From == "" {
			t.Fatalf("accepted a bad message %+v from %q", m, b)
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if !utf8.ValidString(m.Text) {
			t.Fatalf("accepted text is not UTF-8: %q", m.Text)
		}
	})
}

// FuzzSkipLine: the tail's pre-filter only passes over lines the parser
// would yield nothing for; it never hides an activity.
func FuzzSkipLine(f *testing.F) {
	for _, l := range scanLines(f) {
		if len(l) <= 4096 {
			f.Add(l)
		}
	}
	for _, s := range []string{
		`{"isSidechain":true,"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}`,
		`{"type":"progress","data":{"type":"assistant"}}`,
		`{"type":"assis\u0074ant","message":{"content":[{"type":"text","text":"x"}]}}`,
		`{"data":{"type":"progress"},"type":"user","message":{"content":"hi"}}`,
		`{"a":"\\\"","type":"x"}`,
		`{"type":"progress"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !skipLine(line) {
			return
		}
		acts, _ := agents.ParseTranscriptLine(line)
		if len(acts) > 0 {
			t.Fatalf("skipLine hid %d activities of %q", len(acts), line)
		}
	})
}

// Every line of the real transcripts: the pre-filter and the parser agree.
func TestSkipLineAgreesOnRealLines(t *testing.T) {
	skipped := 0
	lines := scanLines(t)
	for _, l := range lines {
		if !skipLine(l) {
			continue
		}
		skipped++
		if acts, _ := agents.ParseTranscriptLine(l); len(acts) > 0 {
			t.Errorf("skipLine hid %d activities of %.200s", len(acts), l)
		}
	}
	if skipped == 0 || bytes.Count(bytes.Join(lines, nil), []byte(`"type":"progress"`)) > 0 && skipped < 100 {
		t.Errorf("skipLine passed over only %d of %d lines", skipped, len(lines))
	}
	t.Logf("%d of %d lines skipped unparsed", skipped, len(lines))
}
