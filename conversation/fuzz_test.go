package conversation

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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
