//go:build unix

package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
)

// manualHooks makes the hooks run here as if by hand (ModeManual) for the
// workspace of s.
func manualHooks(t *testing.T, s *Session) {
	t.Helper()
	for _, k := range []string{"CLAUDE_PID", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ATTENDED", socketEnv, socketTokenEnv, "RELAY_BATON_AGENT_RUN"} {
		t.Setenv(k, "")
	}
	t.Setenv("CLAUDE_PROJECT_DIR", s.Workspace)
}

func payload(t *testing.T, s *Session, event string, fields map[string]any) *bytes.Reader {
	t.Helper()
	m := map[string]any{"session_id": s.ID, "cwd": s.Workspace, "hook_event_name": event}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return bytes.NewReader(b)
}

// hookOn decodes a hook's payload and opens its session in
// CLAUDE_PROJECT_DIR, as package hook does for a hook run by hand (no
// session process, no time bound): the decisions under test are this
// package's.
func hookOn(in io.Reader) (*Session, HookPayload) {
	var p HookPayload
	if json.NewDecoder(in).Decode(&p) != nil {
		panic("a test's hook payload is not JSON")
	}
	s, err := OpenSession(os.Getenv("CLAUDE_PROJECT_DIR"), p.SessionID)
	if err != nil {
		panic(err)
	}
	return s, p
}

func stopHook(in io.Reader, out io.Writer) error {
	s, p := hookOn(in)
	return HookStop(context.Background(), s, p, out)
}

func promptSubmitHook(in io.Reader) { s, p := hookOn(in); HookPromptSubmit(s, p) }

func notifyHook(in io.Reader) { s, p := hookOn(in); HookNotify(s, p) }

func waitHook(in io.Reader, errOut io.Writer, timeout time.Duration) bool {
	s, p := hookOn(in)
	return HookWait(context.Background(), s, p, errOut, timeout)
}

// The Stop hook stores the turn's last_assistant_message as the reply of
// the message it delivered, at the next Stop (the turn that answered it),
// never at the Stop that delivered it; a reply the session wrote itself
// is kept.
func TestStopHookStoresTheReply(t *testing.T) {
	s := newSession(t)
	manualHooks(t, s)
	m, _ := s.Enqueue("room", "how far along?")
	var out bytes.Buffer
	stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "I ran the tests."}), &out)
	if !strings.Contains(out.String(), `"decision":"block"`) {
		t.Fatalf("the Stop hook did not deliver: %q", out.String())
	}
	if _, ok := s.Reply(m.ID); ok {
		t.Fatal("the delivering Stop stored its own turn's text as the reply")
	}
	if !answering(s, m.ID) {
		t.Fatal("not marked as answering")
	}
	out.Reset()
	stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": true, "last_assistant_message": "Two of five steps are done."}), &out)
	if text, ok := s.Reply(m.ID); !ok || text != "Two of five steps are done." {
		t.Fatalf("reply %q %v", text, ok)
	}
	if answering(s, m.ID) || out.Len() != 0 {
		t.Fatalf("mark left (%v) or output %q", answering(s, m.ID), out.String())
	}
	// The next turn's text does not replace it.
	markAnswering(s, m.ID)
	stopHook(payload(t, s, "Stop", map[string]any{"last_assistant_message": "later"}), &out)
	if text, _ := s.Reply(m.ID); text != "Two of five steps are done." {
		t.Fatalf("the stored reply was replaced: %q", text)
	}
}

// A message from the messaging socket reaches the model with a prompt
// (UserPromptSubmit carries the framed text): that turn's end is its
// reply. A prompt quoting the frame of an unknown id stores nothing.
func TestPromptSubmitMarksSocketMessages(t *testing.T) {
	s := newSession(t)
	manualHooks(t, s)
	m, _ := s.Enqueue("room", "status?")
	res, _ := s.Claim(LaneSocket)
	framed := s.Frame(res.Message)
	promptSubmitHook(payload(t, s, "UserPromptSubmit", map[string]any{"prompt": framed + "\n" + chatMarker + "ffff0000 from x] quoted"}))
	if !answering(s, m.ID) {
		t.Fatalf("prompt-submit did not mark %s", m.ID)
	}
	stopHook(payload(t, s, "Stop", map[string]any{"last_assistant_message": "All green."}), new(bytes.Buffer))
	if text, ok := s.Reply(m.ID); !ok || text != "All green." {
		t.Fatalf("reply %q %v", text, ok)
	}
	if _, err := os.Lstat(s.outboxPath("ffff0000")); err == nil {
		t.Fatal("a reply was stored for a message that was never delivered")
	}
	b, _ := os.ReadFile(s.outboxPath(m.ID))
	var r storedReply
	if json.Unmarshal(b, &r) != nil || r.ID != m.ID || r.Source != "stop hook" {
		t.Fatalf("outbox file %s", b)
	}
}

// Follow shows the stored reply, waiting for the Stop hook that runs a
// moment after the transcript shows the turn's end.
func TestFollowWaitsForTheStoredReply(t *testing.T) {
	s, r, tr := handedOver(t, "how far?")
	f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "%s\n", `{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n[relay-baton chat message `+r.Message.ID+` from room, typed]"}}`)
	fmt.Fprintf(f, "%s\n", `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"transcript text, cut short"}],"stop_reason":"end_turn"}}`)
	f.Close()
	go func() {
		time.Sleep(300 * time.Millisecond) // the Stop hook comes a moment after the turn's end
		storeReplies(s, "The full reply, from the Stop hook.")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := Follow(ctx, r, WatchOptions{Poll: 50 * time.Millisecond}, false, func(Update) {})
	if err != nil || got.Outcome != Replied || got.Reply != "The full reply, from the Stop hook." {
		t.Fatalf("follow: %+v %v", got, err)
	}
}

// The Notification hook records a session waiting for its user; it stops
// counting once the transcript moves on, and the next prompt clears it.
func TestNotificationHookNeedsUser(t *testing.T) {
	s := newSession(t)
	manualHooks(t, s)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(tr, []byte("{}\n"), 0o600)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(tr, old, old)
	notifyHook(payload(t, s, "Notification", map[string]any{"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}))
	if _, ok := s.NeedsUser(tr); ok {
		t.Fatal("an idle notification counted as waiting for the user")
	}
	notifyHook(payload(t, s, "Notification", map[string]any{"notification_type": "permission_prompt", "message": "Claude needs your permission\x1b[31m"}))
	a, ok := s.NeedsUser(tr)
	if !ok || a.What() != "a permission prompt" || strings.ContainsRune(a.Message, 0x1b) {
		t.Fatalf("needs user: %+v %v", a, ok)
	}
	s.RecordProcess(procfacts.ThisProcess())
	s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace})
	os.Chtimes(tr, old, old)
	ts, _ := listTargets(context.Background(), s.Workspace, true, procfacts.System)
	if len(ts) != 1 || ts[0].NeedsUser != "a permission prompt" || !strings.Contains(ts[0].Status(), "waiting for its user (a permission prompt)") {
		t.Fatalf("targets: %+v", ts)
	}
	if !strings.HasPrefix(s.Reachability(time.Now()), "waiting for its user (a permission prompt: answer it in the session)") {
		t.Fatalf("reachability: %s", s.Reachability(time.Now()))
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(tr, later, later) // the tool ran: the session moved on
	if _, ok := s.NeedsUser(tr); ok {
		t.Fatal("still waiting after the transcript moved on")
	}
	os.Chtimes(tr, old, old)
	promptSubmitHook(payload(t, s, "UserPromptSubmit", map[string]any{"prompt": "go on"}))
	if _, ok := s.NeedsUser(tr); ok {
		t.Fatal("a prompt did not clear it")
	}
}

// With a live socket, targets and the preview's sentence name the socket
// lane; the Stop hook posts a waiting message there instead of blocking.
func TestSocketInTargetsAndStopHook(t *testing.T) {
	s := newSession(t)
	manualHooks(t, s)
	s.RecordProcess(procfacts.ThisProcess())
	sock := newFakeSocket(t)
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.ThisProcess()})
	s.MarkBusy()
	ts, _ := listTargets(context.Background(), s.Workspace, true, procfacts.System)
	if len(ts) != 1 || !ts[0].Socket || ts[0].Delivers != "socket" || ts[0].Status() != "busy, socket: between tool calls" {
		t.Fatalf("targets: %+v (%s)", ts, ts[0].Status())
	}
	if got := s.Reachability(time.Now()); !strings.Contains(got, "delivers: socket, between tool calls") {
		t.Fatalf("reachability: %s", got)
	}
	m, _ := s.Enqueue("room", "queued while the socket was down")
	var out bytes.Buffer
	stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": true, "last_assistant_message": "x"}), &out)
	if out.Len() != 0 {
		t.Fatalf("the Stop hook blocked: %s", out.String())
	}
	if got := sock.next(t); len(got) != 2 || !strings.Contains(got[1], m.ID) {
		t.Fatalf("posted %q", got)
	}
	if st, _ := s.State(m.ID); st.Delivered == nil || st.Delivered.Lane != LaneSocket {
		t.Fatalf("state %+v", st)
	}
}
