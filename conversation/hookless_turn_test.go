//go:build linux || darwin

package conversation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/prompts"
)

// hooklessTarget is a session Claude Code's registry lists, with no
// relay-baton hook: its socket served by a stand-in process at the
// registry's pid, its transcript where Claude Code writes it. posted
// reports whether the stand-in got message id.
type hooklessTarget struct {
	ws, tr string
	reg    *fakeRegistry
	live   LiveSession
	got    string
}

func newHooklessTarget(t *testing.T) *hooklessTarget {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	reg := newFakeRegistry(t)
	privateTemp(t)
	ws := t.TempDir()
	h := &hooklessTarget{ws: ws, reg: reg}
	h.live = LiveSession{Cwd: ws, Kind: "interactive", StartedAt: time.Now().UnixMilli(), SessionID: testSID, Name: "demo", Status: StatusIdle}
	pending := filepath.Join(filepath.Dir(ClaudeSocketPath(1)), "pending.sock")
	cmd := otherListener(t, pending)
	h.live.PID = cmd.Process.Pid
	if err := os.Rename(pending, ClaudeSocketPath(h.live.PID)); err != nil {
		t.Fatal(err)
	}
	h.got = pending + ".got"
	reg.set(h.live)
	h.tr = filepath.Join(ProjectDir(ws), testSID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(h.tr), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.tr, []byte(lineText+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *hooklessTarget) status(t *testing.T, st string) {
	h.live.Status = st
	h.reg.set(h.live)
}

// posted waits until the stand-in wrote down message id (it does so after
// the post's connection closes); false after a hang guard of a minute.
func (h *hooklessTarget) posted(id string) bool {
	for end := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(h.got)
		if strings.Contains(string(b), "chat message "+id+" ") {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// queued reports whether message id is still in the inbox (not posted).
func queued(t *testing.T, r Receipt) bool {
	t.Helper()
	st, err := r.Session.State(r.Message.ID)
	return err == nil && st.Queued
}

// shows writes what Claude Code writes when the idle session takes the
// posted message m as a new turn.
func (h *hooklessTarget) shows(t *testing.T, m Message) {
	t.Helper()
	appendLine(t, h.tr, peerLine(prompts.FillFrame(Frame(Message{From: m.From, Text: m.Text}), m.ID, m.CreatedAt)))
}

// answers writes the turn's answer and its end.
func (h *hooklessTarget) answers(t *testing.T, text string) {
	t.Helper()
	appendLine(t, h.tr, `{"type":"assistant","message":{"id":"a-`+text+`","role":"assistant","content":[{"type":"text","text":"`+text+`"}],"stop_reason":"end_turn"}}`)
}

func (h *hooklessTarget) send(t *testing.T, text string) Receipt {
	t.Helper()
	r, err := Send(h.ws, testSID, "relay-baton", text)
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send %q: %v, socket: %v", text, err, r.SocketErr)
	}
	return r
}

// A message to a session no hook reaches, sent after the earlier one's
// turn ended in the transcript, is posted at once: the transcript, not a
// Stop hook, says the earlier message was answered (its reply is stored
// from it). Within the claim grace the earlier claim held it back, and
// nothing ever posted it.
func TestHooklessSendAfterTheAnswerIsPosted(t *testing.T) {
	h := newHooklessTarget(t)
	r1 := h.send(t, "first")
	if !h.posted(r1.Message.ID) {
		t.Fatalf("message %s not posted", r1.Message.ID)
	}
	h.shows(t, r1.Message)
	h.answers(t, "ANSWER-ONE")

	r2 := h.send(t, "second")
	if r2.Behind != "" || !h.posted(r2.Message.ID) {
		t.Fatalf("message %s held behind %q (queued: %v) after message %s's turn ended", r2.Message.ID, r2.Behind, queued(t, r2), r1.Message.ID)
	}
	if text, ok := r1.Session.Reply(r1.Message.ID); !ok || text != "ANSWER-ONE" {
		t.Fatalf("reply of %s = %q, %v; want the transcript's text", r1.Message.ID, text, ok)
	}
	if st, _ := r1.Session.State(r1.Message.ID); st.Unconfirmed || st.Delivered == nil {
		t.Fatalf("message %s state %+v: want delivered and confirmed", r1.Message.ID, st)
	}
}

// While the earlier message's turn runs, the next waits (one message per
// turn); a plain send stays (AwaitPost) and posts it at the turn's end.
// A turn that ends with no end in the transcript (interrupted) ends when
// Claude Code's registry says the session is idle.
func TestHooklessHeldMessagePostedAtTheTurnEnd(t *testing.T) {
	h := newHooklessTarget(t)
	r1 := h.send(t, "first")
	h.shows(t, r1.Message)
	h.status(t, StatusBusy)

	r2 := h.send(t, "second")
	if r2.Behind != r1.Message.ID || !queued(t, r2) {
		t.Fatalf("message %s: behind %q, queued %v; want it held behind %s while its turn runs", r2.Message.ID, r2.Behind, queued(t, r2), r1.Message.ID)
	}
	if why := r2.Session.Reachability(time.Now()); !strings.Contains(why, "until message "+r1.Message.ID+" is answered") {
		t.Fatalf("reachability %q does not name the message awaited", why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	done := make(chan *Message, 1)
	go func() {
		m, err := AwaitPost(ctx, r2, 20*time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		done <- m
	}()
	h.answers(t, "ANSWER-ONE")
	h.status(t, StatusIdle)
	if m := <-done; m == nil || m.Lane != LaneSocket || !h.posted(r2.Message.ID) {
		t.Fatalf("AwaitPost: %+v, posted %v", m, h.posted(r2.Message.ID))
	}

	// Interrupted: shown, no turn end; the registry says busy, then idle.
	h.shows(t, r2.Message)
	h.status(t, StatusBusy)
	old := answerStale
	answerStale = 0
	t.Cleanup(func() { answerStale = old })
	r3 := h.send(t, "third")
	if r3.Behind != r2.Message.ID {
		t.Fatalf("message %s behind %q while the registry says busy, want %s", r3.Message.ID, r3.Behind, r2.Message.ID)
	}
	h.status(t, StatusIdle)
	if m, err := AwaitPost(ctx, r3, 20*time.Millisecond); err != nil || m == nil || !h.posted(r3.Message.ID) {
		t.Fatalf("AwaitPost after the interrupted turn: %+v, %v", m, err)
	}
	if _, ok := r2.Session.Reply(r2.Message.ID); ok {
		t.Fatalf("an interrupted turn stored a reply for %s", r2.Message.ID)
	}
}

// A session whose hooks saw RELAY_BATON_NO_SOCKET=1 in its environment
// stays on the hook lanes: its socket, though Claude Code's registry names
// it, is not posted to. Without that word the same socket takes it.
func TestNoSocketSessionNotReachedThroughTheRegistry(t *testing.T) {
	h := newHooklessTarget(t)
	s, err := OpenSession(h.ws, testSID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(Registration{Cwd: h.ws, TranscriptPath: h.tr, Source: "startup"}); err != nil {
		t.Fatal(err)
	}
	p := procfacts.Identify(procfacts.System, h.live.PID)
	s.recordSocketFromEnv(func(k string) string { return map[string]string{NoSocketEnv: "1"}[k] }, p, "", true)
	r := h.send(t, "hooks only")
	if st, _ := s.State(r.Message.ID); !st.Queued {
		t.Fatalf("message %s: %+v, want it queued for the hooks, not posted", r.Message.ID, st)
	}
	if _, err := s.SocketLane(); !errors.Is(err, ErrNoSocket) || !strings.Contains(err.Error(), NoSocketEnv) {
		t.Fatalf("socket lane: %v", err)
	}
	// The next process of the session has its socket on: the lane is back.
	s.recordSocketFromEnv(func(k string) string { return map[string]string{SocketEnv: ClaudeSocketPath(h.live.PID)}[k] }, p, "", true)
	if _, err := s.SocketLane(); err != nil {
		t.Fatalf("socket lane after a hook saw the socket: %v", err)
	}
}
