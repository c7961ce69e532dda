package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func stopHookFeedback(reason string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": "Stop hook feedback:\n" + reason}})
	return string(b) + "\n"
}

const (
	turnText = `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"the answer"}]}}` + "\n"
	turnEnd  = `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}` + "\n"
)

// A look at the turn after a message: not shown, then shown, then ended
// with the turn's text; each look reads only what the file gained, and a
// file truncated meanwhile is read again from the start.
func TestTurnsLookReadsOnlyWhatIsNew(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(turnText), 0o600); err != nil {
		t.Fatal(err)
	}
	var turns Turns
	const needle = "chat message m-1 "
	look := func() (bool, bool, string) {
		t.Helper()
		shown, ended, text, err := turns.Look(p, 0, needle)
		if err != nil {
			t.Fatal(err)
		}
		return shown, ended, text
	}
	if shown, ended, _ := look(); shown || ended {
		t.Fatalf("shown %v ended %v before the message", shown, ended)
	}
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(stopHookFeedback("[relay-baton chat message m-1 from room]\nhello"))
	if shown, ended, _ := look(); !shown || ended {
		t.Fatalf("shown %v ended %v after the message", shown, ended)
	}
	// Truncated and rewritten before the turn ended: read again from the
	// start, where the message is no more.
	if err := os.WriteFile(p, []byte(turnText), 0o600); err != nil {
		t.Fatal(err)
	}
	if shown, ended, _ := look(); shown || ended {
		t.Fatalf("after truncation: shown %v ended %v", shown, ended)
	}
	appendTo(stopHookFeedback("[relay-baton chat message m-1 from room]\nhello"))
	if shown, _, _ := look(); !shown {
		t.Fatal("the message written again is not shown")
	}
	before := turns.BytesRead(p)
	appendTo(turnText + turnEnd)
	fi, _ := os.Stat(p)
	shown, ended, text := look()
	if !shown || !ended || text != "the answer\ndone" {
		t.Fatalf("shown %v ended %v text %q, want the ended turn's text", shown, ended, text)
	}
	if got, want := turns.BytesRead(p)-before, int64(len(turnText+turnEnd)); got != want {
		t.Fatalf("the last look read %d bytes, want the %d the file gained (of %d)", got, want, fi.Size())
	}
	if _, _, text := look(); text != "the answer\ndone" {
		t.Fatalf("an ended turn looked at again: %q", text)
	}
}
