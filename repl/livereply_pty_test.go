//go:build !windows

package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/workspace"
)

// A reply that arrives after Ctrl-C stopped the wait is printed above the
// prompt, the half-typed line drawn again after it, and logged once.
func TestPTYReplyAfterCtrlCShownLive(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // keep ~/.claude out of it
	p := startInProcess(t, &fakeRunner{}, func(string) string { return "" })
	s, err := conversation.OpenSession(p.dir, simSID)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), simSID+".jsonl")
	if err := os.WriteFile(tr, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{TranscriptPath: tr, Cwd: p.dir}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess())
	s.MarkBusy() // in a turn: the message waits for its end
	p.until(t, "claude› ")
	p.send(t, "/agent orchestrator\r")
	p.until(t, "orchestrator› ")
	p.send(t, "are you there?\r")
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "y")
	p.until(t, "queued (0 ahead): message ")
	interruptSelf() // what the terminal's ^C sends while a command runs
	p.until(t, "stopped waiting: message ")
	p.until(t, "orchestrator› ")
	p.send(t, "half typ")
	p.until(t, "half typ")

	// The session's turn ends: the Stop hook delivers the message and the
	// session answers it.
	var block bytes.Buffer
	if err := conversation.HookStop(context.Background(), s, conversation.HookPayload{SessionID: simSID, TranscriptPath: tr, Cwd: p.dir}, &block); err != nil {
		t.Fatal(err)
	}
	var decision struct{ Reason string }
	if err := json.Unmarshal(block.Bytes(), &decision); err != nil {
		t.Fatalf("the Stop hook did not block with the message: %q", block.String())
	}
	id := regexp.MustCompile(`chat message ([0-9a-f]+) `).FindStringSubmatch(decision.Reason)[1]
	appendTranscript(t, tr,
		`{"type":"user","isMeta":true,"message":{"role":"user","content":`+jsonString("Stop hook feedback:\n"+decision.Reason)+`}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"FIRST BLOCK"}],"stop_reason":"end_turn"}}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"LATE ANSWER 42"}],"stop_reason":"end_turn"}}`,
		`{"type":"system","subtype":"turn_duration","durationMs":1200}`,
	)
	// The turn's end: the Stop hook stores its last block as the reply.
	if err := conversation.HookStop(context.Background(), s, conversation.HookPayload{SessionID: simSID, TranscriptPath: tr, Cwd: p.dir, StopHookActive: true, LastAssistantMessage: "LATE ANSWER 42"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	p.until(t, "reply to message "+id)
	p.until(t, "FIRST BLOCK")
	p.until(t, "LATE ANSWER 42")
	p.until(t, "orchestrator› ")
	p.until(t, "half typ") // the line, drawn again below the reply
	p.send(t, "ed\r")      // and still the line being edited
	p.until(t, "half typed")
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "n")
	p.until(t, "cancelled. nothing was sent.")
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	<-p.done
	p.done <- nil // for the cleanup

	replies := 0
	for _, e := range readLog(t, p.dir) {
		if e.Kind == events.KindChatReply && metaMap(e.Meta)["messageId"] == id {
			replies++
			if e.Text != "FIRST BLOCK LATE ANSWER 42" {
				t.Errorf("chat_reply text %q", e.Text)
			}
		}
	}
	if replies != 1 {
		t.Fatalf("%d chat_reply events for %s, want 1; screen:\n%s", replies, id, p.String())
	}
	// chat --resume finds the message answered: nothing to show again.
	rs, err := resume.Read(workspace.LogPath(p.dir), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rs.Chats {
		if c.MessageID == id {
			t.Errorf("chat --resume would show message %s as unanswered", c.MessageID)
		}
	}
	if !strings.Contains(p.String(), "The room shows its reply here when it comes.") {
		t.Errorf("the stopped-waiting line does not say the reply will be shown:\n%s", p.String())
	}
	if strings.Count(p.String(), "LATE ANSWER 42") != 1 {
		t.Fatalf("the reply is not shown once:\n%s", p.String())
	}
}
