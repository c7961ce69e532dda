package room

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/room/chatlane"
	"github.com/relay-baton/relay-baton/workspace"
)

// These tests play the Claude Code session's side by hand (claim a message
// like a lane, append transcript lines like the session): the room's
// orchestrator lane against the real file protocol. e2e_orchestrator_test.go
// does the same with the real Claude Code.

const simSID = "0b7e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"

// simSession registers a chat-capable session in the harness's repository
// and returns it with its (empty) transcript path.
func simSession(t *testing.T, h *harness, id string) (*conversation.Session, string) {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // keep ~/.claude out of it
	s, err := conversation.OpenSession(h.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), id+".jsonl")
	if err := os.WriteFile(tr, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{TranscriptPath: tr, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	h.e.chat.Poll = 20 * time.Millisecond
	return s, tr
}

func appendTranscript(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for _, l := range lines {
		f.WriteString(l + "\n")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitQueued waits until the inbox holds a message and returns nothing; it
// fails the test only if it never does (a hang guard of a minute).
func waitQueued(t *testing.T, s *conversation.Session) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for time.Now().Before(deadline) {
		if q, _ := s.Queue(); q.Depth > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("nothing was queued")
}

// playHookTurn is the session at its turn end: the Stop hook claims the
// message and the session answers it.
func playHookTurn(t *testing.T, s *conversation.Session, tr, answer string) <-chan conversation.Message {
	done := make(chan conversation.Message, 1)
	go func() {
		defer close(done)
		waitQueued(t, s)
		time.Sleep(50 * time.Millisecond)
		res, err := s.Claim(conversation.LaneHook)
		if err != nil || !res.OK {
			t.Errorf("claim: %v %+v", err, res)
			return
		}
		appendTranscript(t, tr,
			`{"type":"user","isMeta":true,"message":{"role":"user","content":`+jsonString("Stop hook feedback:\n"+s.Frame(res.Message))+`}}`,
			`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":""}],"stop_reason":null}}`,
			`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git status","description":"look"}}],"stop_reason":null}}`,
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"clean"}]}}`,
			`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":`+jsonString(answer)+`}],"stop_reason":null}}`,
			`{"type":"system","subtype":"turn_duration","durationMs":1200}`,
		)
		done <- res.Message
	}()
	return done
}

func TestChatThroughTheHookLane(t *testing.T) {
	h := newHarness(t, "y")
	s, tr := simSession(t, h, simSID)
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	if h.e.Active != AgentOrchestrator {
		t.Fatalf("active = %s", h.e.Active)
	}
	if !strings.Contains(h.out.String(), "active agent: orchestrator → Claude Code session "+simSID+" (the lead)") {
		t.Fatalf("switch output:\n%s", h.out)
	}
	played := playHookTurn(t, s, tr, "All fine, the tests pass.")
	if _, err := h.e.Process(ctx, "how is it going?"); err != nil {
		t.Fatal(err)
	}
	m := <-played
	out := h.out.String()
	for _, want := range []string{
		"preview: chat → orchestrator (Claude Code session " + simSID + ")",
		"[relay-baton chat message <id> from relay-baton room",
		"│ how is it going?",
		"queued (0 ahead): message " + m.ID + " for session " + simSID,
		"delivered via hook at ",
		"[orchestrator] ⚙ Bash: look",
		"[orchestrator] All fine, the tests pass.",
		"orchestrator: ✓ end of turn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The preview showed the frame every lane delivers, line for line; with
	// the id and time the queue assigned, it is the text the session got.
	preview := conversation.Frame(conversation.Message{From: chatlane.ChatFrom, Text: "how is it going?"})
	for _, l := range strings.Split(preview, "\n") {
		if !strings.Contains(out, "│ "+l+"\n") {
			t.Errorf("the preview does not show the frame's line %q:\n%s", l, out)
		}
	}
	if got, want := prompts.FillFrame(preview, m.ID, m.CreatedAt), s.Frame(m); got != want {
		t.Errorf("previewed and filled:\n%q\ndelivered:\n%q", got, want)
	}
	list := h.events(t)
	if got := kinds(list); got != "command,status,prompt_preview,command,chat_sent,chat_delivered,chat_reply" {
		t.Fatalf("events %s", got)
	}
	sent, del, reply := list[4], list[5], list[6]
	if sent.Role != events.RoleUser || sent.Text != "how is it going?" || metaMap(sent.Meta)["messageId"] != m.ID || metaMap(sent.Meta)["session"] != simSID ||
		metaMap(sent.Meta)["ahead"] != float64(0) || !strings.HasPrefix(sent.Refs["inbox"], ".claude/session-chat/"+simSID+"/inbox/") || !strings.HasSuffix(sent.Refs["inbox"], "-"+m.ID+".json") || sent.Refs["transcript"] != tr {
		t.Errorf("chat_sent %+v", sent)
	}
	if metaMap(del.Meta)["lane"] != "hook" || metaMap(del.Meta)["messageId"] != m.ID || del.Refs["delivered"] != ".claude/session-chat/"+simSID+"/delivered/"+m.ID+".json" {
		t.Errorf("chat_delivered %+v", del)
	}
	if reply.Role != events.RoleOrchestrator || reply.Text != "All fine, the tests pass." || reply.Refs["transcript"] != tr ||
		metaMap(reply.Meta)["transcriptFrom"] != float64(0) || metaMap(reply.Meta)["transcriptTo"].(float64) <= 0 {
		t.Errorf("chat_reply %+v", reply)
	}
	// The delivered file is the protocol's record.
	if st, err := s.State(m.ID); err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneHook {
		t.Errorf("state %+v %v", st, err)
	}
}

func TestChatDeclinedSendsNothing(t *testing.T) {
	h := newHarness(t, "n")
	s, _ := simSession(t, h, simSID)
	ctx := context.Background()
	h.e.Process(ctx, "/agent orchestrator")
	if _, err := h.e.Process(ctx, "hello"); !errors.Is(err, ErrDeclined) {
		t.Fatalf("err = %v", err)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("queued %d", q.Depth)
	}
	if !strings.Contains(h.out.String(), "cancelled. nothing was sent.") {
		t.Fatalf("output:\n%s", h.out)
	}
	list := h.events(t)
	last := list[len(list)-1]
	if last.Kind != events.KindCommand || metaMap(last.Meta)["sent"] != false || metaMap(last.Meta)["reason"] != "declined" {
		t.Fatalf("last event %+v", last)
	}
	// Without a terminal and without --yes nothing is sent either.
	h.e.SetTerminal(nil)
	if _, err := h.e.Process(ctx, "hello"); !errors.Is(err, ErrNeedYes) {
		t.Fatalf("no terminal: err = %v", err)
	}
}

func TestChatCtrlCWhileQueuedThenCancel(t *testing.T) {
	h := newHarness(t, "y")
	s, _ := simSession(t, h, simSID)
	h.e.Process(context.Background(), "/agent orchestrator")
	s.MarkBusy()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := h.e.Process(ctx, "are you there?"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	if !strings.Contains(out, "in a turn: a message is delivered when the turn ends (Stop hook)") ||
		!strings.Contains(out, "is still queued (0 ahead) and will be delivered at the session's next turn boundary; /cancel removes it.") {
		t.Fatalf("output:\n%s", out)
	}
	id := h.e.chat.Sent[0].ID
	if got, _ := Complete(h.e, "/cancel "); len(got) != 1 || string(got[0]) != id+" " {
		t.Fatalf("completion %q", got)
	}
	if _, err := h.e.Process(context.Background(), "/cancel"); err != nil {
		t.Fatal(err)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("still queued: %d", q.Depth)
	}
	if !strings.Contains(h.out.String(), "cancelled message "+id+": removed from the inbox") {
		t.Fatalf("output:\n%s", h.out)
	}
	if _, err := h.e.Process(context.Background(), "/cancel"); err == nil || !strings.Contains(err.Error(), "none of the messages sent from this room is still queued") {
		t.Fatalf("second /cancel: %v", err)
	}
	if _, err := h.e.Process(context.Background(), "/cancel nope!"); err == nil {
		t.Fatal("/cancel with a bad id worked")
	}
}

func TestChatCtrlCAfterDeliveryAndCancelTooLate(t *testing.T) {
	h := newHarness(t, "y")
	s, _ := simSession(t, h, simSID)
	h.e.Process(context.Background(), "/agent orchestrator")
	go func() {
		waitQueued(t, s)
		s.Claim(conversation.LaneRewake)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := h.e.Process(ctx, "quick one"); err != nil {
		t.Fatal(err)
	}
	id := h.e.chat.Sent[0].ID
	if !strings.Contains(h.out.String(), "stopped waiting: message "+id+" was delivered via rewake at ") {
		t.Fatalf("output:\n%s", h.out)
	}
	if _, err := h.e.Process(context.Background(), "/cancel "+id); err == nil || !strings.Contains(err.Error(), "was already delivered via rewake") {
		t.Fatalf("/cancel after delivery: %v", err)
	}
}

func TestChatUnconfirmedThenResend(t *testing.T) {
	h := newHarness(t, "y", "n", "y")
	s, _ := simSession(t, h, simSID)
	h.e.chat.ConfirmWithin = 200 * time.Millisecond
	h.e.Process(context.Background(), "/agent orchestrator")
	if _, err := h.e.Process(context.Background(), "/resend"); err == nil || !strings.Contains(err.Error(), "no unconfirmed message") {
		t.Fatalf("/resend with nothing: %v", err)
	}
	go func() { // claimed, but the session never shows it (it exited)
		waitQueued(t, s)
		s.Claim(conversation.LaneRewake)
	}()
	if _, err := h.e.Process(context.Background(), "lost message"); err != nil {
		t.Fatal(err)
	}
	first := h.e.chat.Sent[0].ID
	if !strings.Contains(h.out.String(), "has not shown in the transcript within 200ms") || !strings.Contains(h.out.String(), "/resend queues it again") {
		t.Fatalf("output:\n%s", h.out)
	}
	// Declined: nothing sent, still unconfirmed.
	if _, err := h.e.Process(context.Background(), "/resend"); !errors.Is(err, ErrDeclined) || h.e.chat.Unconfirmed == nil {
		t.Fatalf("declined /resend: %v, unconfirmed %v", err, h.e.chat.Unconfirmed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := h.e.Process(ctx, "/resend"); err != nil {
		t.Fatal(err)
	}
	if len(h.e.chat.Sent) != 2 || h.e.chat.Sent[1].Text != "lost message" || h.e.chat.Sent[1].ID == first {
		t.Fatalf("sent %+v", h.e.chat.Sent)
	}
	if q, _ := s.Queue(); q.Depth != 1 {
		t.Fatalf("queue depth %d after /resend", q.Depth)
	}
	if h.e.chat.Unconfirmed != nil {
		t.Fatal("the resent message is still marked unconfirmed")
	}
	if !strings.Contains(h.out.String(), "note:    resend of "+first) {
		t.Fatalf("output:\n%s", h.out)
	}
}

func TestTargets(t *testing.T) {
	h := newHarness(t)
	s, _ := simSession(t, h, simSID)
	other := "9a8b7c6d-0000-4000-8000-123456789abc"
	os.MkdirAll(filepath.Join(h.dir, workspace.ChatDir, other), 0o700) // a folder, no inbox: not chat-capable
	if o, err := conversation.OpenSession(h.dir, other); err == nil {
		o.RecordProcess(procfacts.ThisProcess()) // running, though
	}
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/targets"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, " * "+simSID+"  yes") || !strings.Contains(out, other+"  no") {
		t.Fatalf("/targets:\n%s", out)
	}
	// A Claude Code session started before the install is reached by
	// its messaging socket: the footer speaks of the CHAT no rows only.
	if out := h.out.String(); strings.Contains(out, "cannot chat") || !strings.Contains(out, "a session with CHAT no is reached after `relay-baton hook install` and its restart") {
		t.Fatalf("/targets footer:\n%s", out)
	}
	if _, err := h.e.Process(ctx, "/target 9a8b"); err == nil || !strings.Contains(err.Error(), "is not chat-capable") {
		t.Fatalf("/target of a session without inbox: %v", err)
	}
	if h.e.Active != "claude" {
		t.Fatalf("active = %s", h.e.Active)
	}
	if _, err := h.e.Process(ctx, "/target ffff"); err == nil || !strings.Contains(err.Error(), "no Claude Code or Codex session \"ffff\"") {
		t.Fatalf("/target unknown: %v", err)
	}
	if _, err := h.e.Process(ctx, "/target 0b7e"); err != nil {
		t.Fatal(err)
	}
	if h.e.Active != AgentOrchestrator || h.e.chat.Session != simSID || h.e.chat.Target != simSID {
		t.Fatalf("after /target: %s %s %s", h.e.Active, h.e.chat.Session, h.e.chat.Target)
	}
	h.out.Reset()
	h.e.Process(ctx, "/target")
	if !strings.Contains(h.out.String(), "target: Claude Code session "+simSID+" (chosen with /target)") {
		t.Fatalf("/target:\n%s", h.out)
	}
	s.MarkBusy()
	h.e.Process(ctx, "/targets")
	if !strings.Contains(h.out.String(), ">* "+simSID+"  yes   busy") {
		t.Fatalf("/targets:\n%s", h.out)
	}
	got, _ := Complete(h.e, "/target ")
	if len(got) != 2 || string(got[1]) != simSID+" " {
		t.Fatalf("completion %q", got)
	}
	if !strings.Contains(HelpText(), "/target <sessionId|lead>") || !strings.Contains(HelpText(), "/resend") {
		t.Fatalf("help:\n%s", HelpText())
	}
	if _, err := h.e.Process(ctx, "/agent claude"); err != nil || h.e.Active != "claude" {
		t.Fatalf("back to claude: %v %s", err, h.e.Active)
	}
}

func TestChatLongAndOversizedMessages(t *testing.T) {
	h := newHarness(t, "n")
	s, _ := simSession(t, h, simSID)
	ctx := context.Background()
	h.e.Process(ctx, "/agent orchestrator")
	long := strings.Repeat("word ", 1200) // 6000 chars on one line
	if _, err := h.e.Process(ctx, long); !errors.Is(err, ErrDeclined) {
		t.Fatalf("err = %v", err)
	}
	out := h.out.String()
	if !strings.Contains(out, "v shows all, e edits") || strings.Contains(out, strings.Repeat("word ", 100)) {
		t.Fatalf("long preview:\n%.3000s", out)
	}
	var preview events.Event
	for _, e := range h.events(t) {
		if e.Kind == events.KindPromptPreview {
			preview = e
		}
	}
	b, err := os.ReadFile(filepath.Join(h.e.SessionDir, preview.Refs["prompt"]))
	if err != nil || string(b) != strings.TrimSpace(long) {
		t.Fatalf("saved message %d bytes, %v (refs %v)", len(b), err, preview.Refs)
	}
	if _, err := h.e.Process(ctx, strings.Repeat("x", conversation.MaxMessageBytes+1)); !errors.Is(err, conversation.ErrTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("queued %d", q.Depth)
	}
}
