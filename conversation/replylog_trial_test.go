//go:build unix

package conversation

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// agentEntries counts log.jsonl's agent entries for message id.
func agentEntries(t *testing.T, s *Session, id string) (n int, text string) {
	t.Helper()
	es, err := s.ReadLog(1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Role == "agent" && e.ID == id {
			n, text = n+1, e.Text
		}
	}
	return n, text
}

// The reply to a plain send (nobody follows it) reaches log.jsonl when the
// Stop hook stores it; followers that see it later (send --follow, the
// room, serve) add no second entry.
func TestPlainSendReplyIsLoggedOnce(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	s := newSession(t)
	manualHooks(t, s)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(tr, nil, 0o600)
	s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace})
	r, err := Send(s.Workspace, s.ID, "relay-baton", "how far along?")
	if err != nil {
		t.Fatal(err)
	}
	id := r.Message.ID
	// The turn's end delivers it; the next one's end answers it.
	stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "working"}), new(bytes.Buffer))
	f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "%s\n", `{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n[relay-baton chat message `+id+` from relay-baton, typed]"}}`)
	fmt.Fprintf(f, "%s\n", `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Three of five done."}],"stop_reason":"end_turn"}}`)
	f.Close()
	stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": true, "last_assistant_message": "Three of five done."}), new(bytes.Buffer))
	if n, text := agentEntries(t, s, id); n != 1 || text != "Three of five done." {
		t.Fatalf("after the Stop hook stored the reply: %d agent entries (%q), want the reply once", n, text)
	}
	// Two readers follow it afterwards: still one entry.
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
		got, err := Follow(ctx, r, WatchOptions{Poll: 20 * time.Millisecond}, false, func(Update) {})
		cancel()
		if err != nil || got.Outcome != Replied {
			t.Fatalf("follow: %+v %v", got, err)
		}
	}
	if n, _ := agentEntries(t, s, id); n != 1 {
		t.Fatalf("%d agent entries for %s after two followers, want 1", n, id)
	}
}
