package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

type countingWriter struct {
	strings.Builder
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.Builder.Write(p) }

// A Stream buffers until Flush or Close, writes JSON lines that decode to
// the activities (control bytes escaped), or the Terminal's text.
func TestStream(t *testing.T) {
	acts := []events.Activity{
		{Kind: events.ActTool, Tool: "Bash", Detail: "printf '\x1b]0;x\a'"},
		{Kind: events.ActText, Text: "Hello"},
		{Kind: events.ActDone},
	}
	var w countingWriter
	s := NewStream(&w, false, true)
	for _, a := range acts {
		s.Activity(events.RoleOrchestrator, a)
	}
	if w.writes != 0 {
		t.Errorf("%d writes before Flush", w.writes)
	}
	s.Flush()
	if w.writes != 1 || strings.ContainsAny(w.String(), "\x1b\a") {
		t.Errorf("%d writes, %q", w.writes, w.String())
	}
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != len(acts) {
		t.Fatalf("%d lines for %d activities: %q", len(lines), len(acts), w.String())
	}
	for i, l := range lines {
		var got events.Activity
		if err := json.Unmarshal([]byte(l), &got); err != nil || got.Kind != acts[i].Kind || got.Detail != acts[i].Detail || got.Text != acts[i].Text {
			t.Errorf("line %d %q: %+v %v", i, l, got, err)
		}
	}

	var text, want strings.Builder
	s = NewStream(&text, false, false)
	tr := NewTerminal(&want, false)
	for _, a := range acts[:2] {
		s.Activity(events.RoleOrchestrator, a)
		tr.Activity(events.RoleOrchestrator, a)
	}
	tr.EndLine()
	s.Close()
	if text.String() != want.String() || !strings.HasSuffix(text.String(), "Hello\n") {
		t.Errorf("terminal stream %q, want %q", text.String(), want.String())
	}
}
