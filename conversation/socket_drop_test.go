//go:build unix

package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
)

// droppingSession is a session whose messaging socket takes every post
// and shows nothing (a session that holds or refuses peer messages, a
// burst over its limit): a registered transcript, the stand-in socket, a
// short claim grace.
func droppingSession(t *testing.T) (*Session, string, *fakeSocket) {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "300ms")
	s := newSession(t)
	manualHooks(t, s)
	tr := filepath.Join(t.TempDir(), testSID+".jsonl")
	os.WriteFile(tr, []byte(lineText+"\n"), 0o600)
	if err := s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordProcess(procfacts.ThisProcess()); err != nil {
		t.Fatal(err)
	}
	sock := newFakeSocket(t)
	if err := s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	return s, tr, sock
}

// follower runs Follow on r in the background and hands each update to
// the test as it comes.
type follower struct {
	mu   sync.Mutex
	got  []Update
	ch   chan Update
	done chan FollowResult
}

func follow(t *testing.T, r Receipt) *follower {
	f := &follower{ch: make(chan Update, 64), done: make(chan FollowResult, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		res, _ := Follow(ctx, r, WatchOptions{Poll: 50 * time.Millisecond}, false, func(u Update) {
			f.mu.Lock()
			f.got = append(f.got, u)
			f.mu.Unlock()
			f.ch <- u
		})
		f.done <- res
	}()
	return f
}

// until waits for an update of kind (a hang guard of a minute: each
// comes within the claim grace).
func (f *follower) until(t *testing.T, kind UpdateKind) Update {
	t.Helper()
	for {
		select {
		case u := <-f.ch:
			if u.Kind == kind {
				return u
			}
		case <-time.After(time.Minute):
			t.Fatalf("no %s update; got %v", kind, f.kinds())
		}
	}
}

func (f *follower) kinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, u := range f.got {
		out = append(out, string(u.Kind)+"("+string(u.Lane)+")")
	}
	return out
}

// stopHookLine is what Claude Code writes to the transcript for a Stop
// hook's block.
func stopHookLine(reason string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": "Stop hook feedback:\n" + reason}})
	return string(b)
}

// peerLine is what Claude Code writes for a message from its socket taken
// by an idle session.
func peerLine(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "turnOrigin": "peer", "message": map[string]any{"role": "user", "content": "Another Claude session sent a message:\n" + text + "\n\nThis came from another Claude session."}})
	return string(b)
}

// runStop runs the Stop hook and returns its block's reason ("" when it
// did not block).
func runStop(t *testing.T, s *Session, tr string) string {
	t.Helper()
	var out bytes.Buffer
	if err := stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": false, "transcript_path": tr, "last_assistant_message": "done"}), &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() == 0 {
		return ""
	}
	var d struct{ Decision, Reason string }
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || d.Decision != "block" {
		t.Fatalf("the Stop hook printed %q", out.String())
	}
	return d.Reason
}

// A socket that takes a message and shows nothing: the post is not a
// delivery. Within the claim grace the message goes back to the inbox,
// first in line; the socket lane is off for the session (targets, the
// preview's sentence and the page's state say so); the Stop hook delivers
// it by its block; Follow says posted, requeued, then delivered via hook,
// and the reply.
func TestDroppedSocketPostGoesToTheStopHook(t *testing.T) {
	s, tr, sock := droppingSession(t)
	r, err := Send(s.Workspace, s.ID, "room", "are you there?")
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send: %v %v", err, r.SocketErr)
	}
	sock.next(t)
	f := follow(t, r)
	if u := f.until(t, UpdPosted); u.Lane != LaneSocket {
		t.Fatalf("posted update %+v", u)
	}
	u := f.until(t, UpdRequeued)
	if !strings.Contains(u.Err.Error(), "back in the inbox, first in line") {
		t.Fatalf("requeued: %v", u.Err)
	}
	if st, _ := s.State(r.Message.ID); !st.Queued || st.Ahead != 0 {
		t.Fatalf("state after the grace %+v, want first in line", st)
	}
	if _, err := s.SocketLane(); !errors.Is(err, errSocketDrops) {
		t.Fatalf("SocketLane after a dropped post: %v", err)
	}
	ts, err := ListTargets(s.Workspace)
	if err != nil || len(ts) != 1 || !strings.Contains(ts[0].Status(), "socket drops messages: delivered by hooks") || ts[0].Socket || ts[0].SocketProblem == "" {
		t.Fatalf("targets: %+v %v", ts, err)
	}
	if got := s.Reachability(time.Now()); !strings.Contains(got, "never showed it, so the hooks deliver") {
		t.Fatalf("reachability: %s", got)
	}
	// A later message is not posted to the socket: the hooks take it.
	r2, err := Send(s.Workspace, s.ID, "room", "second")
	if err != nil || !errors.Is(r2.SocketErr, errSocketDrops) {
		t.Fatalf("second send: %v, socket %v", err, r2.SocketErr)
	}
	select {
	case p := <-sock.posts:
		t.Fatalf("posted again to a socket that drops messages: %q", p)
	default:
	}
	// The turn ends: the Stop hook blocks with the first message.
	reason := runStop(t, s, tr)
	if !strings.Contains(reason, "chat message "+r.Message.ID+" ") {
		t.Fatalf("the Stop hook blocked with %q, want message %s", reason, r.Message.ID)
	}
	appendLine(t, tr, stopHookLine(reason))
	if u := f.until(t, UpdDelivered); u.Lane != LaneHook {
		t.Fatalf("delivered %+v, want via hook", u)
	}
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"HOOK-ANSWER"}],"stop_reason":"end_turn"}}`)
	res := <-f.done
	if res.Outcome != Replied || res.Lane != LaneHook || !strings.Contains(res.Reply, "HOOK-ANSWER") {
		t.Fatalf("follow ended %+v", res)
	}
	if st, _ := s.State(r.Message.ID); st.Delivered == nil || st.Delivered.Lane != LaneHook || st.Delivered.SocketPost == nil || st.Delivered.Deliveries != 0 {
		t.Fatalf("record %+v, want delivered by the hook with the socket post kept, not counted as a delivery", st.Delivered)
	}
	if log := readErrors(s); !strings.Contains(log, "posted to the messaging socket") || !strings.Contains(log, "the socket lane is off for this session process") {
		t.Fatalf("errors.log: %s", log)
	}
}

// Without Follow (a plain send): the Stop hook itself puts the dropped
// post back when the grace has passed, and blocks with it.
func TestStopHookRecoversADroppedPost(t *testing.T) {
	s, tr, sock := droppingSession(t)
	r, err := Send(s.Workspace, s.ID, "room", "plain send")
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send: %v %v", err, r.SocketErr)
	}
	sock.next(t)
	if st, _ := s.State(r.Message.ID); !st.Unconfirmed {
		t.Fatalf("state right after the post: %+v, want posted and unconfirmed", st)
	}
	// Within the grace the Stop hook leaves the post alone...
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "1h")
	if reason := runStop(t, s, tr); reason != "" {
		t.Fatalf("blocked within the grace: %q", reason)
	}
	// ... after it, it delivers the message itself, and no post follows.
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s")
	reason := runStop(t, s, tr)
	if !strings.Contains(reason, "chat message "+r.Message.ID+" ") {
		t.Fatalf("the Stop hook blocked with %q", reason)
	}
	select {
	case p := <-sock.posts:
		t.Fatalf("posted again: %q", p)
	default:
	}
}

// An unreadable transcript is not evidence of a socket post: the message
// goes back to the inbox for the hooks. A hook lane's hand-over with no
// transcript stands (its own output is the evidence).
func TestUnreadableTranscriptIsNoEvidence(t *testing.T) {
	s, tr, sock := droppingSession(t)
	m, _ := s.Enqueue("room", "hello")
	if n, err := s.deliverSocket(context.Background(), tr); n != 1 || err != nil {
		t.Fatalf("DeliverSocket: %d %v", n, err)
	}
	sock.next(t)
	os.Remove(tr) // the transcript cannot be read any more
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s")
	rec := recoverClaims(s)
	if len(rec) != 1 || !rec[0].Requeue || !rec[0].Dropped {
		t.Fatalf("recovered %+v, want the post put back", rec)
	}
	if st, _ := s.State(m.ID); !st.Queued {
		t.Fatalf("state %+v", st)
	}
	if o, ok := s.socketOffState(); !ok || !strings.Contains(o.Reason, "cannot be read") {
		t.Fatalf("socket-off: %+v %v", o, ok)
	}
	res, err := s.ClaimWith(LaneHook, ClaimOptions{Handover: true, Transcript: tr})
	if err != nil || !res.OK {
		t.Fatal(err)
	}
	res.Delivered()
	if rec := recoverClaims(s); len(rec) != 0 {
		t.Fatalf("a hook's hand-over with no transcript was recovered: %+v", rec)
	}
	if st, _ := s.State(m.ID); st.Delivered == nil || st.Delivered.Lane != LaneHook || st.Unconfirmed {
		t.Fatalf("state %+v", st)
	}
}

// A dropped post that shows late, before the hooks hand the message over
// again: it counts as delivered by the socket and the Stop hook does not
// deliver it a second time.
func TestLateSocketPostBeforeTheHook(t *testing.T) {
	s, tr, sock := droppingSession(t)
	m, _ := s.Enqueue("room", "held for approval")
	s.deliverSocket(context.Background(), tr)
	posted := sock.next(t)
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s")
	if rec := recoverClaims(s); len(rec) != 1 || !rec[0].Requeue {
		t.Fatalf("recovered %+v", rec)
	}
	// The user approved it in the session: it shows now.
	var post struct{ Message struct{ Content string } }
	json.Unmarshal([]byte(posted[len(posted)-1]), &post)
	appendLine(t, tr, peerLine(post.Message.Content))
	if reason := runStop(t, s, tr); reason != "" {
		t.Fatalf("the Stop hook delivered it again: %q", reason)
	}
	st, _ := s.State(m.ID)
	if st.Queued || st.Delivered == nil || st.Delivered.Lane != LaneSocket {
		t.Fatalf("state %+v, want delivered by the socket", st)
	}
	if got := deliveriesOf(t, tr, m.ID); got != 1 {
		t.Fatalf("the transcript shows it %d times", got)
	}
	if !strings.Contains(readErrors(s), "showed in the transcript after it had been put back in the inbox") {
		t.Fatalf("errors.log: %s", readErrors(s))
	}
}

// A dropped post that shows late, after the Stop hook delivered the
// message: it reached the session twice, and that is said (Follow's
// UpdDuplicate, errors.log), but counted once: one delivery, one reply.
func TestLateSocketPostAfterTheHook(t *testing.T) {
	s, tr, sock := droppingSession(t)
	r, _ := Send(s.Workspace, s.ID, "room", "twice?")
	posted := sock.next(t)
	f := follow(t, r)
	f.until(t, UpdRequeued)
	reason := runStop(t, s, tr)
	appendLine(t, tr, stopHookLine(reason))
	f.until(t, UpdConfirmed)
	var post struct{ Message struct{ Content string } }
	json.Unmarshal([]byte(posted[len(posted)-1]), &post)
	appendLine(t, tr, peerLine(post.Message.Content))
	u := f.until(t, UpdDuplicate)
	if u.Lane != LaneSocket || !strings.Contains(u.Err.Error(), "a second time") {
		t.Fatalf("duplicate %+v", u)
	}
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"once"}],"stop_reason":"end_turn"}}`)
	res := <-f.done
	if res.Outcome != Replied || res.Lane != LaneHook {
		t.Fatalf("follow %+v", res)
	}
	delivered := 0
	for _, k := range f.kinds() {
		if strings.HasPrefix(k, "delivered(") {
			delivered++
		}
	}
	if delivered != 1 {
		t.Fatalf("%d delivered updates: %v", delivered, f.kinds())
	}
	if !strings.Contains(readErrors(s), "reached the session a second time") {
		t.Fatalf("errors.log: %s", readErrors(s))
	}
}

// The socket lane stays off for the session process that dropped a post;
// a new process (the session restarted) tries it again.
func TestSocketOffIsPerProcess(t *testing.T) {
	s, tr, sock := droppingSession(t)
	s.Enqueue("room", "x")
	s.deliverSocket(context.Background(), tr)
	sock.next(t)
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s")
	recoverClaims(s)
	if _, err := s.SocketLane(); !errors.Is(err, errSocketDrops) {
		t.Fatalf("after the drop: %v", err)
	}
	p := procfacts.ThisProcess()
	p.Start++ // another process of the session
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: p})
	if _, ok := s.socketOffState(); ok {
		t.Fatal("the off state of the old process holds for the new one")
	}
}

func readErrors(s *Session) string {
	b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	return string(b)
}

// deliveriesOf counts the transcript's deliveries of message id.
func deliveriesOf(t *testing.T, tr, id string) int {
	t.Helper()
	n := 0
	b, _ := os.ReadFile(tr)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "chat message "+id+" ") && (strings.Contains(l, "peer") || strings.Contains(l, "Stop hook feedback")) {
			n++
		}
	}
	return n
}

// One message per turn boundary: a second message sent while the first,
// posted to the socket, has not been answered waits in the inbox (Send
// says behind which, the preview's sentence says so); at the end of the
// turn that answered the first, the Stop hook stores its reply and posts
// the second, which gets a turn and a reply of its own.
func TestOneMessagePerTurn(t *testing.T) {
	s, tr, sock := droppingSession(t)
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "1h") // nothing is put back here
	r1, err := Send(s.Workspace, s.ID, "room", "first question")
	if err != nil || r1.SocketErr != nil || r1.Behind != "" {
		t.Fatalf("first send: %v %v %q", err, r1.SocketErr, r1.Behind)
	}
	post1 := sock.next(t)
	r2, err := Send(s.Workspace, s.ID, "room", "second question")
	if err != nil || r2.SocketErr != nil || r2.Behind != r1.Message.ID {
		t.Fatalf("second send: %v, socket %v, behind %q (want %s)", err, r2.SocketErr, r2.Behind, r1.Message.ID)
	}
	if st, _ := s.State(r2.Message.ID); !st.Queued {
		t.Fatalf("the second message %+v, want it queued", st)
	}
	if got := s.Reachability(time.Now()); !strings.Contains(got, "a new message waits until message "+r1.Message.ID+" is answered") {
		t.Fatalf("reachability: %s", got)
	}
	// The session takes the first in (UserPromptSubmit with its text):
	// busy, answering it. Nudges (a follower's) post nothing more.
	var p1 struct{ Message struct{ Content string } }
	json.Unmarshal([]byte(post1[len(post1)-1]), &p1)
	promptSubmitHook(payload(t, s, "UserPromptSubmit", map[string]any{"prompt": p1.Message.Content}))
	appendLine(t, tr, peerLine(p1.Message.Content))
	recoverClaims(s)
	if n, err := s.deliverSocket(context.Background(), tr); n != 0 || !errors.Is(err, errAwaitingAnswer) {
		t.Fatalf("DeliverSocket during the first's turn: %d %v", n, err)
	}
	select {
	case p := <-sock.posts:
		t.Fatalf("posted during the first message's turn: %q", p)
	default:
	}
	// Its turn ends: the reply is stored, and the second goes out alone.
	if reason := runStopWith(t, s, tr, "FIRST-ANSWER"); reason != "" {
		t.Fatalf("the Stop hook blocked: %q", reason)
	}
	if text, _ := s.Reply(r1.Message.ID); text != "FIRST-ANSWER" {
		t.Fatalf("the first's reply %q", text)
	}
	post2 := sock.next(t)
	if !strings.Contains(strings.Join(post2, "\n"), "second question") || strings.Contains(strings.Join(post2, "\n"), "first question") {
		t.Fatalf("posted %q", post2)
	}
	var p2 struct{ Message struct{ Content string } }
	json.Unmarshal([]byte(post2[len(post2)-1]), &p2)
	promptSubmitHook(payload(t, s, "UserPromptSubmit", map[string]any{"prompt": p2.Message.Content}))
	runStopWith(t, s, tr, "SECOND-ANSWER")
	if text, _ := s.Reply(r2.Message.ID); text != "SECOND-ANSWER" {
		t.Fatalf("the second's reply %q", text)
	}
	if text, _ := s.Reply(r1.Message.ID); text != "FIRST-ANSWER" {
		t.Fatalf("the first's reply became %q", text)
	}
}

// runStopWith is runStop with the turn's last text.
func runStopWith(t *testing.T, s *Session, tr, last string) string {
	t.Helper()
	var out bytes.Buffer
	if err := stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": false, "transcript_path": tr, "last_assistant_message": last}), &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() == 0 {
		return ""
	}
	return out.String()
}

// A session reached through its socket alone (no relay-baton hooks in the
// repository) whose socket dropped a message has no lane left to take it:
// its sentence says the message waits and names the install and the
// restart, instead of promising a hook delivery.
func TestSocketDropsWithoutHooksSaysWhatToDo(t *testing.T) {
	s, tr, sock := droppingSession(t)
	if err := s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace, Source: "registry"}); err != nil {
		t.Fatal(err)
	}
	s.Enqueue("room", "x")
	s.deliverSocket(context.Background(), tr)
	sock.next(t)
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s")
	recoverClaims(s)
	if _, err := s.SocketLane(); !errors.Is(err, errSocketDrops) {
		t.Fatalf("after the drop: %v", err)
	}
	got := s.Reachability(time.Now())
	if !strings.Contains(got, "no relay-baton hooks are installed") || !strings.Contains(got, "relay-baton hook install") || !strings.Contains(got, "claude --resume "+s.ID) {
		t.Errorf("without hooks: %q", got)
	}
	if ts, err := ListTargets(s.Workspace); err != nil || len(ts) != 1 || !strings.Contains(ts[0].SocketProblem, "relay-baton hook install") {
		t.Errorf("targets without hooks: %+v %v", ts, err)
	}
	settings := filepath.Join(s.Workspace, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/relay-baton hook stop"}]}]}}`), 0o644)
	if got := s.Reachability(time.Now()); !strings.Contains(got, "so the hooks deliver") || strings.Contains(got, "hook install") {
		t.Errorf("with hooks: %q", got)
	}
}
