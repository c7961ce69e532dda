package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// fakeRoom is a Room over a temporary .ai-session with a settable context.
type fakeRoom struct {
	dir string
	mu  sync.Mutex
	ctx map[string]any
}

func (r *fakeRoom) LogPath() string    { return filepath.Join(r.dir, "conversation.jsonl") }
func (r *fakeRoom) SessionDir() string { return r.dir }
func (r *fakeRoom) Context(context.Context) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := map[string]any{}
	for k, v := range r.ctx {
		c[k] = v
	}
	return c, nil
}
func (r *fakeRoom) set(k string, v any) { r.mu.Lock(); r.ctx[k] = v; r.mu.Unlock() }

func newRoomServer(t *testing.T) (*fakeRoom, *events.Log, string) {
	t.Helper()
	fr := &fakeRoom{dir: filepath.Join(t.TempDir(), ".ai-session"), ctx: map[string]any{"activeAgent": "claude"}}
	if err := os.Mkdir(fr.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lg, err := events.OpenLog(fr.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	return fr, lg, serveLoopback(t, fr)
}

// serveLoopback serves a server with room r (nil: none) on a free loopback
// port, as `relay-baton serve` does (the Host rule needs the real port).
func serveLoopback(tb testing.TB, r Room) string {
	tb.Helper()
	ln, err := Listen(0)
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := New(&fakeBackend{}, port)
	s.SetLog(nil)
	if r != nil {
		s.SetRoom(r)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	register(tb, base, s.Token())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, ln, s); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	return base
}

func logN(t *testing.T, lg *events.Log, n int, role events.Role, text string) {
	t.Helper()
	for i := range n {
		if err := lg.Append(events.New("s", role, events.KindMessage, fmt.Sprintf("%s %d", text, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTimelinePagesAndFilters(t *testing.T) {
	_, lg, base := newRoomServer(t)
	logN(t, lg, 30, events.RoleUser, "u")
	logN(t, lg, 10, events.RoleClaude, "c")
	var pg TimelinePage
	getJSON(t, base+"/api/timeline?limit=15", http.StatusOK, &pg)
	if len(pg.Events) != 15 || !pg.More || pg.Events[14].Event.Text != "c 9" || pg.Events[0].Event.Text != "u 25" {
		t.Fatalf("first page: %d events, more %v, %q..%q", len(pg.Events), pg.More, pg.Events[0].Event.Text, pg.Events[len(pg.Events)-1].Event.Text)
	}
	var pg2 TimelinePage
	getJSON(t, fmt.Sprintf("%s/api/timeline?limit=100&before=%d", base, pg.Before), http.StatusOK, &pg2)
	if len(pg2.Events) != 25 || pg2.More || pg2.Events[24].Event.Text != "u 24" {
		t.Fatalf("second page: %d events, more %v", len(pg2.Events), pg2.More)
	}
	var f TimelinePage
	getJSON(t, base+"/api/timeline?role=claude&kind=message,plan", http.StatusOK, &f)
	if len(f.Events) != 10 || f.Events[0].Event.Role != events.RoleClaude {
		t.Fatalf("role filter: %d events", len(f.Events))
	}
	for _, bad := range []string{"?role=wizard", "?kind=nope", "?limit=0", "?limit=5000", "?before=-3", "?before=x"} {
		var e map[string]any
		getJSON(t, base+"/api/timeline"+bad, http.StatusBadRequest, &e)
		if e["error"] == "" {
			t.Fatalf("%s: no error text", bad)
		}
	}
}

func TestTimelineWithoutLogOrRoom(t *testing.T) {
	fr, lg, base := newRoomServer(t)
	lg.Close()
	os.Remove(fr.LogPath())
	var pg TimelinePage
	getJSON(t, base+"/api/timeline", http.StatusOK, &pg)
	if !pg.NoLog || len(pg.Events) != 0 {
		t.Fatalf("no log: %+v", pg)
	}
	// A server without a room (served outside a repository) says so.
	bare := serveLoopback(t, nil)
	for _, p := range []string{"/api/timeline", "/api/context", "/api/ref?name=plan.md", "/api/room/stream"} {
		var e map[string]any
		getJSON(t, bare+p, http.StatusNotFound, &e)
	}
}

func TestRefServesOnlyRegularFilesInside(t *testing.T) {
	fr, _, base := newRoomServer(t)
	os.WriteFile(filepath.Join(fr.dir, "plan.md"), []byte("## Goal\n<script>x</script>\n"), 0o600)
	os.Mkdir(filepath.Join(fr.dir, "prompts"), 0o700)
	os.WriteFile(filepath.Join(fr.dir, "prompts", "p1.txt"), []byte("the prompt"), 0o600)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	os.Symlink(secret, filepath.Join(fr.dir, "handoff.md"))
	os.Symlink(filepath.Dir(secret), filepath.Join(fr.dir, "linked"))
	testkit.MakeFIFO(t, filepath.Join(fr.dir, "review.md"))
	os.WriteFile(filepath.Join(fr.dir, "big.log"), []byte(strings.Repeat("x", MaxRefBytes+100)), 0o600)

	get := func(name string) (int, string, string) {
		t.Helper()
		c := &http.Client{Timeout: 5 * time.Second, Transport: http.DefaultClient.Transport} // a FIFO must not hang the request
		r, err := c.Get(base + "/api/ref?name=" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, r.Header.Get("Content-Type"), string(b)
	}
	if code, ct, body := get("plan.md"); code != 200 || !strings.HasPrefix(ct, "text/plain") || !strings.Contains(body, "<script>x</script>") {
		t.Fatalf("plan.md: %d %s %q", code, ct, body)
	}
	if code, _, body := get("prompts/p1.txt"); code != 200 || body != "the prompt" {
		t.Fatalf("prompt: %d %q", code, body)
	}
	for _, name := range []string{"handoff.md", "linked/secret", "review.md", "../secret", "/etc/passwd", "prompts", "", "a%00b"} {
		code, _, body := get(name)
		if code != http.StatusForbidden && code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Fatalf("%q: %d %q (want a refusal)", name, code, body)
		}
		if strings.Contains(body, "SECRET") {
			t.Fatalf("%q leaked the symlink's target", name)
		}
	}
	if code, _, _ := get("missing.md"); code != http.StatusNotFound {
		t.Fatalf("missing: %d", code)
	}
	if code, _, body := get("big.log"); code != 200 || len(body) < MaxRefBytes || !strings.Contains(body, "cut at") {
		t.Fatalf("big: %d, %d bytes", code, len(body))
	}
}

// TestRoomStreamLiveEventsAndContext: the stream delivers events appended
// after the page's End (not those before) and a context event whenever the
// context changes.
func TestRoomStreamLiveEventsAndContext(t *testing.T) {
	old := ContextEvery
	ContextEvery = 50 * time.Millisecond
	defer func() { ContextEvery = old }()
	fr, lg, base := newRoomServer(t)
	logN(t, lg, 3, events.RoleUser, "before")
	var pg TimelinePage
	getJSON(t, base+"/api/timeline", http.StatusOK, &pg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/room/stream?from=%d", base, pg.End), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	type sse struct{ name, data string }
	got := make(chan sse, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				name = l[7:]
			case strings.HasPrefix(l, "data: "):
				got <- sse{name, l[6:]}
			}
		}
		close(got)
	}()
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case e, ok := <-got:
				if !ok {
					t.Fatalf("stream ended waiting for %s", want)
				}
				if e.name == want {
					return e.data
				}
				if e.name == "timeline" && strings.Contains(e.data, "before") {
					t.Fatalf("an event from before End was streamed again: %s", e.data)
				}
			case <-ctx.Done():
				t.Fatalf("no %s event", want)
			}
		}
	}
	if c := next("context"); !strings.Contains(c, `"activeAgent":"claude"`) {
		t.Fatalf("first context: %s", c)
	}
	logN(t, lg, 1, events.RoleCodex, "live")
	var te TimelineEvent
	if err := json.Unmarshal([]byte(next("timeline")), &te); err != nil || te.Event.Text != "live 0" || te.Event.Role != events.RoleCodex {
		t.Fatalf("live event: %+v %v", te, err)
	}
	// Untrusted text reaches the page inert.
	logN(t, lg, 1, events.RoleClaude, "esc \x1b]0;title\x07 csi \x1b[2J c1 \u009b")
	if err := json.Unmarshal([]byte(next("timeline")), &te); err != nil || strings.ContainsAny(te.Event.Text, "\x1b\x07\u009b") || !strings.Contains(te.Event.Text, "^[") {
		t.Fatalf("live event: %+v %v", te, err)
	}
	fr.set("activeAgent", "codex")
	if c := next("context"); !strings.Contains(c, `"activeAgent":"codex"`) {
		t.Fatalf("changed context: %s", c)
	}
}
