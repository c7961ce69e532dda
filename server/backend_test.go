package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/procfacts"
)

// rbBin is the relay-baton binary built once for these tests: the browser
// test claims messages with the real `relay-baton hook stop`.
var rbBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rb-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rbBin = filepath.Join(dir, "relay-baton")
	out, err := exec.Command("go", "build", "-o", rbBin, "github.com/relay-baton/relay-baton").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build relay-baton: %v\n%s", err, out)
		os.Exit(1)
	}
	http.DefaultClient = &http.Client{Transport: withSecret{http.DefaultTransport}}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chatWorkspace makes a workspace with one chat-capable, registered session
// whose transcript exists (empty).
func chatWorkspace(t *testing.T) (ws string, s *conversation.Session, transcript string) {
	t.Helper()
	ws = t.TempDir()
	s, transcript = chatSession(t, ws)
	return ws, s, transcript
}

// chatSession registers the chat-capable session sid in the workspace ws,
// its transcript existing (empty), its process this test.
func chatSession(t *testing.T, ws string) (s *conversation.Session, transcript string) {
	t.Helper()
	s, err := conversation.OpenSession(ws, sid)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	transcript = filepath.Join(t.TempDir(), sid+".jsonl")
	if err := os.WriteFile(transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{SessionID: sid, TranscriptPath: transcript, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	return s, transcript
}

// stopHookTurn is the session's turn boundary as Claude Code plays it:
// the real `relay-baton hook stop` claims the waiting message (its reason
// must carry want), and the session's answer is appended to its
// transcript as Claude Code writes it (the hook's feedback, thinking, a
// tool call, the text, the turn's end).
func stopHookTurn(t *testing.T, ws, transcript, want, answer string) {
	t.Helper()
	var claimed struct{ Decision, Reason string }
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, sid, transcript, ws)
	cmd := exec.Command(rbBin, "hook", "stop")
	cmd.Stdin = strings.NewReader(payload)
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+ws)
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("hook stop: %v", err)
		return
	}
	if err := json.Unmarshal(out, &claimed); err != nil || claimed.Decision != "block" || !strings.Contains(claimed.Reason, want) {
		t.Errorf("hook stop printed %q (%v)", out, err)
		return
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	feedback, _ := json.Marshal("Stop hook feedback:\n" + claimed.Reason)
	text, _ := json.Marshal(answer)
	appendLines(t, transcript,
		`{"type":"user","isMeta":true,"isSidechain":false,"timestamp":"`+now+`","message":{"role":"user","content":`+string(feedback)+`}}`,
		`{"type":"assistant","isSidechain":false,"timestamp":"`+now+`","message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":""}],"stop_reason":null}}`,
		`{"type":"assistant","isSidechain":false,"timestamp":"`+now+`","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"Bash","input":{"command":"go test ./...","description":"Run the tests"}}],"stop_reason":"tool_use"}}`,
		`{"type":"assistant","isSidechain":false,"timestamp":"`+now+`","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":`+string(text)+`}],"stop_reason":"end_turn"}}`,
		`{"type":"system","subtype":"turn_duration","durationMs":1200,"timestamp":"`+now+`"}`,
	)
}

func startWorkspaceServer(t *testing.T, ws string) (string, *Workspace) {
	t.Helper()
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(context.Background())
	b := NewWorkspace(ctx, ws)
	done := make(chan struct{})
	srv := New(b, port)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	register(t, base, srv.Token())
	go func() { Serve(ctx, ln, srv); close(done) }()
	t.Cleanup(func() { cancel(); <-done; b.Wait() })
	return base, b
}

func TestWorkspaceBackendRoutes(t *testing.T) {
	ws, s, _ := chatWorkspace(t)
	base, _ := startWorkspaceServer(t, ws)

	code, body := post(t, base+"/api/send", "application/json", base, `{"session":"`+sid+`","text":"first"}`)
	if code != 200 || body["id"] == "" {
		t.Fatalf("send: %d %v", code, body)
	}
	code, body = post(t, base+"/api/send", "application/json", base, `{"session":"`+sid+`","text":"second"}`)
	if code != 200 || body["ahead"] != float64(1) {
		t.Fatalf("second send: %d %v (want ahead 1)", code, body)
	}
	if q, _ := s.Queue(); q.Depth != 2 {
		t.Fatalf("inbox depth %d, want 2", q.Depth)
	}
	var tg struct{ Targets []Target }
	getJSON(t, base+"/api/targets", 200, &tg)
	if len(tg.Targets) != 1 || tg.Targets[0].ID != sid || !tg.Targets[0].Lead || !tg.Targets[0].ChatCapable || tg.Targets[0].QueueDepth != 2 {
		t.Fatalf("targets: %+v", tg.Targets)
	}
	var lg struct{ Entries []LogEntry }
	getJSON(t, base+"/api/log?session="+sid, 200, &lg)
	if len(lg.Entries) != 2 || lg.Entries[0].Text != "first" || lg.Entries[0].Role != "user" {
		t.Fatalf("log: %+v", lg.Entries)
	}

	// Refusals that depend on the protocol.
	for _, id := range []string{"../../etc/passwd", "not-a-uuid", "11111111-2222-3333-4444-555555555555"} {
		b, _ := json.Marshal(map[string]string{"session": id, "text": "x"})
		if code, body := post(t, base+"/api/send", "application/json", base, string(b)); code != 404 {
			t.Fatalf("session %q: %d %v, want 404", id, code, body)
		}
		getJSON(t, base+"/api/log?session="+id, 404, nil)
	}
	big := strings.Repeat("x", 70<<10) // over the protocol's 64 KB, under the body cap
	b, _ := json.Marshal(map[string]string{"session": sid, "text": big})
	if code, body := post(t, base+"/api/send", "application/json", base, string(b)); code != 400 || !strings.Contains(fmt.Sprint(body["error"]), "KB") {
		t.Fatalf("oversized message: %d %v, want 400 with the size in the error", code, body)
	}
	if code, body := post(t, base+"/api/send", "application/json", base, `{"session":"`+sid+`","text":"a\u0000b"}`); code != 400 || !strings.Contains(fmt.Sprint(body["error"]), "NUL") {
		t.Fatalf("message with NUL: %d %v, want 400 naming the NUL", code, body)
	}
	if q, _ := s.Queue(); q.Depth != 2 {
		t.Fatalf("inbox depth %d after refusals, want 2", q.Depth)
	}

	// A session with a transcript but no inbox (started before hook install)
	// is not offered (no process known to run) and not chat-capable: 409
	// with the reason.
	other := "22222222-3333-4444-8555-666666666666"
	cfg := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	pdir := claudecode.ProjectDir(ws)
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pdir, other+".jsonl"), []byte(`{"type":"user"}`+"\n"), 0o600)
	getJSON(t, base+"/api/targets", 200, &tg)
	if len(tg.Targets) != 1 || tg.Targets[0].ID != sid {
		t.Fatalf("targets with a transcript-only session: %+v", tg.Targets)
	}
	if code, body := post(t, base+"/api/send", "application/json", base, `{"session":"`+other+`","text":"hi"}`); code != 409 || !strings.Contains(fmt.Sprint(body["error"]), "hook install") {
		t.Fatalf("not chat-capable: %d %v", code, body)
	}
	if q, _ := s.Queue(); q.Depth != 2 {
		t.Fatalf("a refused send changed the queue: depth %d", q.Depth)
	}
}

// appendLines appends transcript lines as Claude Code would.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPanelInBrowser walks the panel's whole path on the real protocol:
// the page sends, the real `relay-baton hook stop` claims the message at a
// turn boundary, the reply is appended to the transcript as Claude Code
// writes it, and the page shows the reply and the end of the turn.
func TestPanelInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ws, s, transcript := chatWorkspace(t)
	base, _ := startWorkspaceServer(t, ws)
	const text = "how is the refactor going?"
	panelScenario(t, base, sid, text,
		func() bool {
			q, _ := s.Queue()
			return q.Depth == 1
		},
		func() {
			stopHookTurn(t, ws, transcript, text, "Halfway there: the parser split is done and the tests are green.")
		},
		"the parser split is done")
	// The delivery is on disk with its lane, and the reply reached log.jsonl.
	ents, _ := os.ReadDir(s.DeliveredDir())
	if len(ents) != 1 {
		t.Fatalf("delivered/ has %d files", len(ents))
	}
	var m conversation.Message
	b, _ := os.ReadFile(filepath.Join(s.DeliveredDir(), ents[0].Name()))
	if json.Unmarshal(b, &m) != nil || m.Lane != conversation.LaneHook || m.DeliveredAt == nil {
		t.Fatalf("delivered file: %s", b)
	}
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		var lg struct{ Entries []LogEntry }
		resp, err := http.Get(base + "/api/log?session=" + sid)
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&lg)
			resp.Body.Close()
		}
		if len(lg.Entries) == 2 && lg.Entries[1].Role == "agent" && strings.Contains(lg.Entries[1].Text, "parser split") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reply not in log.jsonl: %+v", lg.Entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServerAndRoomShareTheQueue sends through the server and, at the same
// time, straight through the protocol (as the room does), while a Stop-hook
// style claimer drains the inbox: every message is delivered exactly once.
func TestServerAndRoomShareTheQueue(t *testing.T) {
	ws, s, _ := chatWorkspace(t)
	base, _ := startWorkspaceServer(t, ws)
	const each = 150
	errc := make(chan error, 2)
	go func() {
		for i := 0; i < each; i++ {
			b, _ := json.Marshal(map[string]string{"session": sid, "text": fmt.Sprintf("server %d", i)})
			req, _ := http.NewRequest("POST", base+"/api/send", strings.NewReader(string(b)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", base)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errc <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errc <- fmt.Errorf("server send %d: HTTP %d", i, resp.StatusCode)
				return
			}
		}
		errc <- nil
	}()
	go func() {
		for i := 0; i < each; i++ {
			if _, err := conversation.Send(ws, sid, "room", fmt.Sprintf("room %d", i)); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	got := map[string]int{}
	senders := 2
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < 2*each && time.Now().Before(deadline) {
		res, err := s.Claim(conversation.LaneHook)
		if err != nil {
			t.Fatal(err)
		}
		if res.OK {
			got[res.Message.Text]++
			continue
		}
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
			senders--
		default:
			time.Sleep(time.Millisecond)
		}
	}
	for senders > 0 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		senders--
	}
	for i := 0; i < each; i++ {
		for _, k := range []string{fmt.Sprintf("server %d", i), fmt.Sprintf("room %d", i)} {
			if got[k] != 1 {
				t.Fatalf("%q delivered %d times", k, got[k])
			}
		}
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("%d left in the inbox", q.Depth)
	}
}

// A refused send keeps its cause in the chain under the HTTP status's
// error: errors.Is finds both.
func TestWorkspaceSendKeepsTheCause(t *testing.T) {
	ws, _, _ := chatWorkspace(t)
	b := NewWorkspace(t.Context(), ws)
	defer b.Wait()
	_, err := b.Send(t.Context(), sid, "t", strings.Repeat("x", conversation.MaxMessageBytes+1))
	if !errors.Is(err, ErrBadRequest) || !errors.Is(err, conversation.ErrTooLarge) {
		t.Fatalf("oversized: %v, want ErrBadRequest wrapping conversation.ErrTooLarge", err)
	}
	_, err = b.Send(t.Context(), sid, "t", "a\x00b")
	if !errors.Is(err, ErrBadRequest) || !errors.Is(err, conversation.ErrNUL) {
		t.Fatalf("NUL: %v, want ErrBadRequest wrapping conversation.ErrNUL", err)
	}
	if err := b.Check("not-a-uuid"); !errors.Is(err, ErrUnknownSession) || !errors.Is(err, conversation.ErrBadSessionID) {
		t.Fatalf("bad id: %v, want ErrUnknownSession wrapping conversation.ErrBadSessionID", err)
	}
}

// Watch calls ready once it has its starting points (what was delivered,
// how long the transcript is), and everything after that reaches the
// page: a delivery and a reply made at once after ready are both shown.
// (The page opens its stream, and sends, only after ready.)
func TestWatchShowsWhatFollowsReady(t *testing.T) {
	ws, _, transcript := chatWorkspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWorkspace(ctx, ws)
	const text = "are the tests green?"
	if _, err := w.Send(ctx, sid, "page", text); err != nil {
		t.Fatal(err)
	}
	evs := make(chan Event, 64)
	done := make(chan error, 1)
	go func() {
		done <- w.Watch(ctx, sid, func() { stopHookTurn(t, ws, transcript, text, "All green after the split.") }, func(e Event) { evs <- e })
	}()
	var got []string
	for want := []string{"delivered", "text", "end_turn"}; len(want) > 0; {
		select {
		case e := <-evs:
			got = append(got, e.Name)
			if e.Name == want[0] {
				want = want[1:]
			}
		case <-time.After(time.Minute): // a hang guard
			t.Fatalf("after ready the page was shown %v, not the delivery, the reply and its end", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
