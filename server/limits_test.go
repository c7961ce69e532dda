package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/prompts"
)

// inotifyCount is how many inotify instances this process holds.
func inotifyCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// settleInotify waits for the count to reach want (closing a watcher is
// asynchronous) and returns the last count.
func settleInotify(t *testing.T, ok func(int) bool) int {
	t.Helper()
	n := inotifyCount(t)
	for deadline := time.Now().Add(time.Minute); !ok(n) && time.Now().Before(deadline); n = inotifyCount(t) {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// TestSendsShareOneWatcher: messages sent through the panel to a session
// that does not answer hold the watchers of one recorder (not one set per
// message, which ran the user out of inotify instances), and the recorder
// and its watchers go once the replies are recorded.
func TestSendsShareOneWatcher(t *testing.T) {
	ws, s, transcript := chatWorkspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := NewWorkspace(ctx, ws)
	defer func() { cancel(); b.Wait() }()
	before := inotifyCount(t)
	const sends = 40
	var ids []string
	for i := range sends {
		sent, err := b.Send(t.Context(), sid, "dashboard", fmt.Sprintf("are you there? %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sent.ID)
	}
	time.Sleep(300 * time.Millisecond)
	held := inotifyCount(t) - before
	if held > 2 {
		t.Fatalf("%d sends to a silent session hold %d inotify instances; want at most 2 (one recorder per session)", sends, held)
	}
	if n, running := b.Recording(sid); n != sends || !running {
		t.Fatalf("recorder: %d pending, running %v", n, running)
	}
	// The session answers every message: the replies are recorded and the
	// recorder ends, releasing its watchers.
	f, _ := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	for i := range sends {
		res, err := s.Claim(conversation.LaneHook)
		if err != nil || !res.OK {
			t.Fatalf("claim %d: %v %+v", i, err, res)
		}
		frame := prompts.FrameChat(prompts.ChatMessage{ID: res.Message.ID, From: res.Message.From, Text: res.Message.Text, CreatedAt: res.Message.CreatedAt})
		fmt.Fprintf(f, `{"type":"user","isMeta":true,"message":{"role":"user","content":%q}}`+"\n", "Stop hook feedback:\n"+frame)
		fmt.Fprintf(f, `{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":"answer %d"}],"stop_reason":"end_turn"}}`+"\n", i, i)
	}
	f.Close()
	deadline := time.Now().Add(20 * time.Second)
	for _, running := b.Recording(sid); running; _, running = b.Recording(sid) {
		if time.Now().After(deadline) {
			n, _ := b.Recording(sid)
			t.Fatalf("recorder still running with %d pending after every reply", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := settleInotify(t, func(n int) bool { return n <= before }); n > before {
		t.Errorf("idle recorder left %d inotify instances (before: %d)", n, before)
	}
	es, _, _ := b.LogSkipped(sid)
	replies := 0
	for _, e := range es {
		if e.Role == "agent" && strings.HasPrefix(e.Text, "answer ") {
			replies++
		}
	}
	if replies != sends {
		t.Errorf("%d replies recorded in log.jsonl, want %d", replies, sends)
	}
}

// TestSSECap: the event streams open at once are capped; one more gets a
// clear refusal (503, saying what to do), and a slot frees when a client
// leaves.
func TestSSECap(t *testing.T) {
	_, _, base := newTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(ctx context.Context) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?session="+sid, nil)
		return http.DefaultClient.Do(req)
	}
	var cancels []context.CancelFunc
	for i := range MaxSSEClients {
		c, cc := context.WithCancel(ctx)
		cancels = append(cancels, cc)
		resp, err := open(c)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream %d: %v %v", i, resp, err)
		}
		defer resp.Body.Close()
	}
	resp, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "too many live panels") || !strings.Contains(string(body), "close other tabs") {
		t.Fatalf("stream %d: %d %s; want 503 saying what to do", MaxSSEClients+1, resp.StatusCode, body)
	}
	cancels[0]()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		resp, err := open(ctx)
		if err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("no slot freed after a client left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
