//go:build unix

package conversation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
)

// fakeSocket is a session's messaging socket: it records each
// connection's lines.
type fakeSocket struct {
	path  string
	ln    net.Listener
	posts chan []string
}

func newFakeSocket(t *testing.T) *fakeSocket {
	t.Helper()
	dir, err := os.MkdirTemp("", "sock") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSocket{path: p, ln: ln, posts: make(chan []string, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var lines []string
			sc := bufio.NewScanner(c)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			c.Close()
			f.posts <- lines
		}
	}()
	return f
}

func (f *fakeSocket) next(t *testing.T) []string {
	t.Helper()
	select {
	case p := <-f.posts:
		return p
	case <-time.After(20 * time.Second): // a hang guard: a post arrives at once
		t.Fatal("nothing was posted to the socket")
	}
	return nil
}

const testToken = "0123456789abcdef0123456789abcdef"

// Send to a session with a live socket posts the framed message there at
// once (auth line, then the user message) and records it delivered by the
// socket lane; the token shows nowhere but in the post.
func TestSendPostsToTheSocket(t *testing.T) {
	s := newSession(t)
	sock := newFakeSocket(t)
	if err := s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(s.Dir(), "socket.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket.json: %v %v, want mode 0600", fi, err)
	}
	r, err := Send(s.Workspace, s.ID, "room", "how far along?")
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send: %v, socket: %v", err, r.SocketErr)
	}
	lines := sock.next(t)
	if len(lines) != 2 || lines[0] != `{"type":"auth","token":"`+testToken+`"}` {
		t.Fatalf("posted %q, want the auth line then the message", lines)
	}
	var m struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil || m.Type != "user" || m.Message.Role != "user" {
		t.Fatalf("message line %q: %v", lines[1], err)
	}
	for _, want := range []string{"[relay-baton chat message " + r.Message.ID + " from room", "Your user sent this chat message from relay-baton, not in this terminal.", "<chat-message>\nhow far along?\n</chat-message>"} {
		if !strings.Contains(m.Message.Content, want) {
			t.Errorf("posted text lacks %q:\n%s", want, m.Message.Content)
		}
	}
	st, err := s.State(r.Message.ID)
	if err != nil || st.Delivered == nil || st.Delivered.Lane != LaneSocket || st.Delivered.DeliveredAt == nil {
		t.Fatalf("state %+v %v, want delivered by the socket lane", st, err)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("queue depth %d after the post", q.Depth)
	}
	for _, f := range []string{"errors.log", "log.jsonl"} {
		if b, _ := os.ReadFile(filepath.Join(s.Dir(), f)); strings.Contains(string(b), testToken) {
			t.Errorf("%s holds the token:\n%s", f, b)
		}
	}
}

// A refused, vanished or planted socket: the message stays first in line
// for the hook lanes, Send says why, and nothing blocks (a FIFO at the
// socket's path is never opened).
func TestSocketFailureFallsBackToTheInbox(t *testing.T) {
	cases := map[string]func(t *testing.T, p string){
		"vanished": func(t *testing.T, p string) {},
		"refused": func(t *testing.T, p string) {
			ln, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close() // the socket file stays, nobody listens
		},
		"fifo":         func(t *testing.T, p string) { testkit.MakeFIFO(t, p) },
		"regular file": func(t *testing.T, p string) { os.WriteFile(p, []byte("x"), 0o600) },
		"symlink to a socket": func(t *testing.T, p string) {
			sock := newFakeSocket(t)
			os.Symlink(sock.path, p)
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSession(t)
			dir, _ := os.MkdirTemp("", "sock")
			t.Cleanup(func() { os.RemoveAll(dir) })
			p := filepath.Join(dir, "s.sock")
			plant(t, p)
			if err := s.RecordSocket(SocketInfo{Path: p, Token: testToken, Process: procfacts.ThisProcess()}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r, err := Send(s.Workspace, s.ID, "room", "still there?")
			if err != nil {
				t.Fatal(err)
			}
			if r.SocketErr == nil || !errors.Is(r.SocketErr, peer.ErrRefused) && !errors.Is(r.SocketErr, peer.ErrNotSessions) {
				t.Fatalf("SocketErr = %v, want a refused socket", r.SocketErr)
			}
			if strings.Contains(r.SocketErr.Error(), testToken) {
				t.Fatalf("the error shows the token: %v", r.SocketErr)
			}
			if took := time.Since(start); took > socketTimeout+5*time.Second {
				t.Fatalf("send took %s", took)
			}
			st, err := s.State(r.Message.ID)
			if err != nil || !st.Queued || st.Ahead != 0 {
				t.Fatalf("state %+v %v, want queued first in line", st, err)
			}
			// The hook lanes take it from there.
			res, err := s.Claim(LaneHook)
			if err != nil || !res.OK || res.Message.ID != r.Message.ID {
				t.Fatalf("the Stop hook's claim: %+v %v", res, err)
			}
		})
	}
}

// No socket recorded, a socket of an ended process, a session in
// bypassPermissions: the socket lane is not tried and Send reports no
// error (Reachability names the lane that delivers).
func TestSocketLaneNotUsed(t *testing.T) {
	s := newSession(t)
	if _, err := s.SocketLane(); !errors.Is(err, errNoSocket) {
		t.Fatalf("no record: %v", err)
	}
	sock := newFakeSocket(t)
	ended := procfacts.ThisProcess()
	ended.Start++ // the pid reused by another process
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: ended})
	if _, err := s.SocketLane(); !errors.Is(err, errNoSocket) {
		t.Fatalf("the process that bound it ended: %v", err)
	}
	// A record without the full evidence relay-baton's hook writes (a
	// pid only, as a file committed to a repository would hold).
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.Process{PID: os.Getpid()}})
	if _, err := s.SocketLane(); !errors.Is(err, errNoSocket) {
		t.Fatalf("a pid-only record: %v", err)
	}
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.ThisProcess(), PermissionMode: "bypassPermissions"})
	if _, err := s.SocketLane(); !errors.Is(err, ErrSocketHeld) {
		t.Fatalf("bypassPermissions: %v", err)
	}
	r, err := Send(s.Workspace, s.ID, "room", "held?")
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send: %v %v", err, r.SocketErr)
	}
	if st, _ := s.State(r.Message.ID); !st.Queued {
		t.Fatalf("state %+v, want queued for the hook lanes", st)
	}
	select {
	case p := <-sock.posts:
		t.Fatalf("posted %q to a session that holds peer messages", p)
	default:
	}
	// A later prompt in default mode (same process) lifts it.
	s.RecordSocket(SocketInfo{Path: sock.path, Token: testToken, Process: procfacts.ThisProcess(), PermissionMode: "default"})
	if _, err := s.SocketLane(); err != nil {
		t.Fatal(err)
	}
	// RELAY_BATON_NO_SOCKET=1 switches the lane off for a sender...
	t.Setenv(NoSocketEnv, "1")
	if _, err := s.SocketLane(); !errors.Is(err, errNoSocket) {
		t.Fatalf("switched off: %v", err)
	}
	// ... and, in a session's environment, its hooks record no socket.
	env := map[string]string{socketEnv: sock.path, socketTokenEnv: testToken, NoSocketEnv: "1"}
	recordSocketFromEnv(s, func(k string) string { return env[k] }, procfacts.ThisProcess(), "", true)
	if _, ok := s.Socket(); ok {
		t.Fatal("recorded a socket with the lane switched off")
	}
}

// The hooks record the socket Claude Code gives them (0600, replacing a
// symlink planted at socket.json instead of writing through it), and a
// session process without one (messaging off) drops the old record.
func TestHooksRecordTheSocket(t *testing.T) {
	s := newSession(t)
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o600)
	os.Symlink(outside, filepath.Join(s.Dir(), "socket.json"))
	env := map[string]string{socketEnv: "/tmp/cc-socks/4242.sock", socketTokenEnv: testToken}
	recordSocketFromEnv(s, func(k string) string { return env[k] }, procfacts.ThisProcess(), "", true)
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatalf("written through the symlink: %q", b)
	}
	info, ok := s.Socket()
	if !ok || info.Path != "/tmp/cc-socks/4242.sock" || info.Token != testToken || info.Process != procfacts.ThisProcess() {
		t.Fatalf("recorded %+v %v", info, ok)
	}
	recordSocketFromEnv(s, func(k string) string { return env[k] }, procfacts.ThisProcess(), "bypassPermissions", false)
	if info, _ := s.Socket(); info.PermissionMode != "bypassPermissions" {
		t.Fatalf("permission mode not recorded: %+v", info)
	}
	recordSocketFromEnv(s, func(string) string { return "" }, procfacts.ThisProcess(), "", false)
	if _, ok := s.Socket(); !ok {
		t.Fatal("a prompt hook without the variable dropped the record")
	}
	recordSocketFromEnv(s, func(string) string { return "" }, procfacts.ThisProcess(), "", true)
	if _, ok := s.Socket(); ok {
		t.Fatal("a session start without a socket kept the old record")
	}
	env[socketEnv] = "relative.sock"
	recordSocketFromEnv(s, func(k string) string { return env[k] }, procfacts.ThisProcess(), "", true)
	if _, ok := s.Socket(); ok {
		t.Fatal("a relative socket path was recorded")
	}
}

// A message posted to the socket of a session busy in a long tool call
// shows in the transcript only as Claude Code's enqueue until the tool
// returns: recoverClaims leaves that claim alone (no second delivery); a post
// that never showed at all goes back to the inbox.
func TestRecoverSocketClaim(t *testing.T) {
	for _, enqueued := range []bool{true, false} {
		t.Run(fmt.Sprint("enqueued=", enqueued), func(t *testing.T) {
			s := newSession(t)
			tr := filepath.Join(t.TempDir(), "t.jsonl")
			os.WriteFile(tr, []byte(`{"type":"user","message":{"role":"user","content":"go"}}`+"\n"), 0o600)
			sock := newFakeSocket(t)
			s.RecordSocket(SocketInfo{Path: sock.path, Process: procfacts.ThisProcess()})
			m, _ := s.Enqueue("room", "are you there?")
			if n, err := s.deliverSocket(context.Background(), tr); n != 1 || err != nil {
				t.Fatalf("DeliverSocket: %d %v", n, err)
			}
			sock.next(t)
			t.Setenv("RELAY_BATON_CLAIM_GRACE", "0s") // as if long after the post
			if enqueued {
				f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
				fmt.Fprintf(f, `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-12-02T04:35:47.137Z","content":"[relay-baton chat message %s from room, typed by the user at x]"}`+"\n", m.ID)
				f.Close()
			}
			rec := recoverClaims(s)
			st, _ := s.State(m.ID)
			if enqueued && (len(rec) != 0 || st.Queued) {
				t.Fatalf("an enqueued post was recovered: %+v, state %+v", rec, st)
			}
			if !enqueued && (len(rec) != 1 || !rec[0].Requeue || !st.Queued) {
				t.Fatalf("a lost post: recovered %+v, state %+v, want back in the inbox", rec, st)
			}
		})
	}
}

// socketPosterMain claims a message for the socket lane and hangs before
// posting it (the test kills it there).
func socketPosterMain(ws string) int {
	s, err := OpenSession(ws, testSID)
	if err != nil {
		return 1
	}
	res, err := s.ClaimWith(LaneSocket, ClaimOptions{Handover: true})
	if err != nil || !res.OK {
		return 1
	}
	os.WriteFile(filepath.Join(ws, "claimed"), []byte(res.Message.ID), 0o600)
	time.Sleep(time.Minute)
	return 0
}

// A poster killed between its claim and its post: the message goes back
// to the inbox and is posted once by the next sender.
func TestSocketPosterKilledMidClaim(t *testing.T) {
	s := newSession(t)
	m, _ := s.Enqueue("room", "survive the kill")
	child := startChild(t, "RB_SOCKET_POSTER="+s.Workspace)
	t.Cleanup(func() { child.Process.Kill() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(s.Workspace, "claimed")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the poster never claimed")
		}
	}
	if st, _ := s.State(m.ID); !st.Incomplete || st.Stalled {
		t.Fatalf("while the poster lives: %+v, want a live incomplete claim", st)
	}
	child.Process.Kill()
	child.Wait()
	sock := newFakeSocket(t)
	s.RecordSocket(SocketInfo{Path: sock.path, Process: procfacts.ThisProcess()})
	if n, err := s.deliverSocket(context.Background(), ""); n != 1 || err != nil {
		t.Fatalf("DeliverSocket after the kill: %d %v", n, err)
	}
	if got := sock.next(t); len(got) != 1 || !strings.Contains(got[0], "survive the kill") {
		t.Fatalf("posted %q", got)
	}
	if n, _ := s.deliverSocket(context.Background(), ""); n != 0 {
		t.Fatalf("posted %d more", n)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log")); !strings.Contains(string(b), "died before the message was handed over") {
		t.Fatalf("errors.log: %s", b)
	}
}
