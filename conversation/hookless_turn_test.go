//go:build linux || darwin

package conversation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
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
	live   claudecode.Session
	got    string
}

func newHooklessTarget(t *testing.T) *hooklessTarget {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	reg := newFakeRegistry(t)
	privateTemp(t)
	ws := t.TempDir()
	h := &hooklessTarget{ws: ws, reg: reg}
	h.live = claudecode.Session{Cwd: ws, Kind: "interactive", StartedAt: time.Now().UnixMilli(), SessionID: testSID, Name: "demo", Status: claudecode.StatusIdle}
	pending := filepath.Join(filepath.Dir(claudecode.SocketPath(1)), "pending.sock")
	cmd := otherListener(t, pending)
	h.live.PID = cmd.Process.Pid
	if err := os.Rename(pending, claudecode.SocketPath(h.live.PID)); err != nil {
		t.Fatal(err)
	}
	h.got = pending + ".got"
	reg.set(h.live)
	h.tr = filepath.Join(claudecode.ProjectDir(ws), testSID+".jsonl")
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
	h.status(t, claudecode.StatusBusy)

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
	h.status(t, claudecode.StatusIdle)
	if m := <-done; m == nil || m.Lane != LaneSocket || !h.posted(r2.Message.ID) {
		t.Fatalf("AwaitPost: %+v, posted %v", m, h.posted(r2.Message.ID))
	}

	// Interrupted: shown, no turn end; the registry says busy, then idle.
	h.shows(t, r2.Message)
	h.status(t, claudecode.StatusBusy)
	r3 := h.send(t, "third")
	if r3.Behind != r2.Message.ID {
		t.Fatalf("message %s behind %q while its turn is young, want %s", r3.Message.ID, r3.Behind, r2.Message.ID)
	}
	r3.Session.answerStale = time.Nanosecond // the registry's word counts at once
	if id, _ := r3.Session.awaitingAnswer(time.Now(), mayRun); id != r2.Message.ID {
		t.Fatalf("awaiting %q while the registry says busy, want %s", id, r2.Message.ID)
	}
	h.status(t, claudecode.StatusIdle)
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
	recordSocketFromEnv(s, func(k string) string { return map[string]string{NoSocketEnv: "1"}[k] }, p, "", true)
	r := h.send(t, "hooks only")
	if st, _ := s.State(r.Message.ID); !st.Queued {
		t.Fatalf("message %s: %+v, want it queued for the hooks, not posted", r.Message.ID, st)
	}
	if _, err := s.SocketLane(); !errors.Is(err, errNoSocket) || !strings.Contains(err.Error(), NoSocketEnv) {
		t.Fatalf("socket lane: %v", err)
	}
	// The next process of the session has its socket on: the lane is back.
	recordSocketFromEnv(s, func(k string) string { return map[string]string{socketEnv: claudecode.SocketPath(h.live.PID)}[k] }, p, "", true)
	if _, err := s.SocketLane(); err != nil {
		t.Fatalf("socket lane after a hook saw the socket: %v", err)
	}
}

// A look at a running turn reads only what the transcript gained since the
// last look: AwaitPost looks every 250 ms, and a transcript is megabytes.
func TestTurnLooksReadOnlyWhatIsNew(t *testing.T) {
	h := newHooklessTarget(t)
	r1 := h.send(t, "first")
	h.shows(t, r1.Message)
	h.status(t, claudecode.StatusBusy)
	var pad strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&pad, `{"type":"assistant","message":{"id":"p-%d","role":"assistant","content":[{"type":"text","text":"%s"}]}}`+"\n", i, strings.Repeat("x", 400))
	}
	f, err := os.OpenFile(h.tr, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(pad.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	size := transcriptSize(t, h.tr)
	s := r1.Session
	const looks = 20
	for range looks {
		if id, ok := s.awaitingAnswer(time.Now(), mayRun); !ok || id != r1.Message.ID {
			t.Fatalf("awaiting %q, %v; want %s", id, ok, r1.Message.ID)
		}
	}
	h.answers(t, "ANSWER-ONE")
	if id, ok := s.awaitingAnswer(time.Now(), mayRun); ok {
		t.Fatalf("still awaiting %s after the turn's end", id)
	}
	read := turnScans.BytesRead(h.tr)
	t.Logf("%d looks read %d bytes of a %d-byte transcript", looks+1, read, size)
	if read == 0 || read > 2*size {
		t.Fatalf("%d looks read %d bytes of a %d-byte transcript; want each byte about once", looks+1, read, size)
	}
}

// A view (Reachability, the targets) says whether a message waits for an
// earlier one's answer from the registry's last answer: it starts no
// `claude agents --json`, however old the turn.
func TestReachabilityStartsNoProcess(t *testing.T) {
	h := newHooklessTarget(t)
	r1 := h.send(t, "first")
	h.shows(t, r1.Message)
	h.status(t, claudecode.StatusBusy)
	r2 := h.send(t, "second")
	if r2.Behind != r1.Message.ID {
		t.Fatalf("message %s behind %q, want %s", r2.Message.ID, r2.Behind, r1.Message.ID)
	}
	s := r2.Session
	later := time.Now().Add(time.Minute) // past the mark's staleness: a registry's word would count
	calls := filepath.Join(t.TempDir(), "calls")
	wrapper := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + os.Getenv(agents.ClaudeBinEnv) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(agents.ClaudeBinEnv, wrapper)
	claudecode.ForgetRegistry()
	if got := s.Reachability(later); !strings.Contains(got, "until message "+r1.Message.ID+" is answered") {
		t.Fatalf("reachability %q does not name the message awaited", got)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Fatalf("a view ran claude: %q", b)
	}
	// Nothing remembered either: the view says less, and still runs nothing.
	if err := os.Remove(claudecode.RegistryFile()); err != nil {
		t.Fatal(err)
	}
	claudecode.ForgetRegistry()
	if got := s.Reachability(later); !strings.Contains(got, "until message "+r1.Message.ID+" is answered") {
		t.Fatalf("reachability %q does not name the message awaited", got)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Fatalf("a view ran claude to find the session's socket: %q", b)
	}
}

func transcriptSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
