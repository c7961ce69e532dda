package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const sid = "0b5c5ad4-4c1f-4f53-9d7a-3a0a6a1b9a11"

// fakeBackend is an in-memory Backend: a test double for the protocol, so
// these tests are about HTTP behaviour only.
type fakeBackend struct {
	mu    sync.Mutex
	sent  []string
	watch chan Event // events to broadcast to every open Watch
	subs  map[chan Event]bool
	once  sync.Once
}

// fanOut copies fb.watch to every subscriber, so a stream that the page
// closed and reopened cannot swallow an event meant for the live one.
func (f *fakeBackend) fanOut() {
	go func() {
		for e := range f.watch {
			for { // hold the event until a stream is open
				f.mu.Lock()
				n := len(f.subs)
				f.mu.Unlock()
				if n > 0 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			f.mu.Lock()
			for c := range f.subs {
				select {
				case c <- e:
				default:
				}
			}
			f.mu.Unlock()
		}
	}()
}

func (f *fakeBackend) Targets(context.Context) ([]Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []Target{{ID: sid, Lead: true, ChatCapable: true, QueueDepth: len(f.sent)}}, nil
}

func (f *fakeBackend) Check(id string) error {
	if id != sid {
		return fmt.Errorf("session %q: %w", id, ErrUnknownSession)
	}
	return nil
}

func (f *fakeBackend) Log(id string) ([]LogEntry, error) {
	if err := f.Check(id); err != nil {
		return nil, err
	}
	return []LogEntry{{Role: "user", Text: "hello", ID: "abcd1234"}}, nil
}

func (f *fakeBackend) Send(_ context.Context, id, from, text string) (Sent, error) {
	if err := f.Check(id); err != nil {
		return Sent{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, from+":"+text)
	return Sent{ID: "deadbeef", Ahead: len(f.sent) - 1}, nil
}

func (f *fakeBackend) Watch(ctx context.Context, id string, ready func(), fn func(Event)) error {
	f.once.Do(f.fanOut)
	c := make(chan Event, 16)
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[chan Event]bool{}
	}
	f.subs[c] = true
	f.mu.Unlock()
	ready()
	defer func() {
		f.mu.Lock()
		delete(f.subs, c)
		f.mu.Unlock()
	}()
	for {
		select {
		case e := <-c:
			fn(e)
		case <-ctx.Done():
			return nil
		}
	}
}

func newTest(t *testing.T) (*fakeBackend, *httptest.Server, string) {
	t.Helper()
	fb := &fakeBackend{watch: make(chan Event, 8)}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := New(fb, port)
	srv.SetLog(nil)
	register(t, "http://127.0.0.1:"+strconv.Itoa(port), srv.Token())
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return fb, ts, "http://127.0.0.1:" + strconv.Itoa(port)
}

func post(t *testing.T, url, ctype, origin, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestSendRefusals(t *testing.T) {
	fb, _, base := newTest(t)
	url := base + "/api/send"
	good := `{"session":"` + sid + `","text":"hi"}`
	cases := []struct {
		name, ctype, origin, body string
		want                      int
	}{
		{"ok", "application/json", base, good, 200},
		{"ok with charset", "application/json; charset=utf-8", base, good, 200},
		{"ok localhost origin", "application/json", strings.Replace(base, "127.0.0.1", "localhost", 1), good, 200},
		{"form encoded", "application/x-www-form-urlencoded", base, "session=" + sid + "&text=hi", 415},
		{"text plain", "text/plain", base, good, 415},
		{"no content type", "", base, good, 415},
		{"cross origin", "application/json", "http://evil.example", good, 403},
		{"other port origin", "application/json", "http://127.0.0.1:1", good, 403},
		{"too large", "application/json", base, `{"session":"` + sid + `","text":"` + strings.Repeat("x", MaxBody) + `"}`, 413},
		{"unknown session", "application/json", base, `{"session":"11111111-2222-3333-4444-555555555555","text":"hi"}`, 404},
		{"empty text", "application/json", base, `{"session":"` + sid + `","text":"  "}`, 400},
		{"no session", "application/json", base, `{"text":"hi"}`, 400},
		{"not json", "application/json", base, `{"session":`, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := post(t, url, c.ctype, c.origin, c.body)
			if code != c.want {
				t.Fatalf("status %d, want %d (body %v)", code, c.want, body)
			}
			if code != 200 && body["error"] == "" {
				t.Fatalf("refusal without an error message: %v", body)
			}
		})
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.sent) != 3 {
		t.Fatalf("backend got %d sends, want exactly the 3 accepted: %v", len(fb.sent), fb.sent)
	}
	if fb.sent[0] != "dashboard:hi" {
		t.Fatalf("default from: %q", fb.sent[0])
	}
}

func TestPageAndReadRoutes(t *testing.T) {
	_, _, base := newTest(t)
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	b := new(strings.Builder)
	_, _ = bufio.NewReader(resp.Body).WriteTo(b)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(b.String(), `id="composer"`) {
		t.Fatalf("page: %d %.200s", resp.StatusCode, b.String())
	}
	for _, secret := range []string{"token", "apiKey", "secret"} {
		if strings.Contains(strings.ToLower(b.String()), strings.ToLower(secret)+"=") {
			t.Fatalf("page carries something like a secret: %q", secret)
		}
	}
	var tg struct{ Targets []Target }
	getJSON(t, base+"/api/targets", 200, &tg)
	if len(tg.Targets) != 1 || !tg.Targets[0].Lead {
		t.Fatalf("targets: %+v", tg)
	}
	var lg struct{ Entries []LogEntry }
	getJSON(t, base+"/api/log?session="+sid, 200, &lg)
	if len(lg.Entries) != 1 || lg.Entries[0].Text != "hello" {
		t.Fatalf("log: %+v", lg)
	}
	getJSON(t, base+"/api/log?session=nope", 404, nil)
	getJSON(t, base+"/api/log", 400, nil)
	getJSON(t, base+"/api/events?session=nope", 404, nil)
	getJSON(t, base+"/nothing-here", 404, nil)
	req, _ := http.NewRequest("DELETE", base+"/api/targets", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
}

func getJSON(t *testing.T, url string, want int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d", url, resp.StatusCode, want)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
}

func TestEventStream(t *testing.T) {
	fb, _, base := newTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?session="+sid, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	fb.watch <- Event{Name: "delivered", Data: map[string]string{"lane": "hook"}}
	fb.watch <- Event{Name: "text", Data: map[string]string{"text": "two\nlines"}}
	fb.watch <- Event{Name: "end_turn", Data: map[string]string{}}
	sc := bufio.NewScanner(resp.Body)
	var names, datas []string
	for sc.Scan() && len(names) < 3 {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			datas = append(datas, d)
		}
	}
	if strings.Join(names, ",") != "delivered,text,end_turn" {
		t.Fatalf("events %v", names)
	}
	if datas[1] != `{"text":"two\nlines"}` {
		t.Fatalf("text data must stay on one SSE line: %q", datas[1])
	}
}

// TestListensOnLoopbackOnly reads /proc/net/tcp: the listening socket's
// local address must be 127.0.0.1 (0100007F), never 0.0.0.0.
func TestListensOnLoopbackOnly(t *testing.T) {
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("read /proc/net/tcp: %v", err)
	}
	want := fmt.Sprintf(":%04X", port)
	found := false
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(f[1], want) || f[3] != "0A" { // 0A = LISTEN
			continue
		}
		found = true
		if f[1] != "0100007F"+want {
			t.Fatalf("listening on %s, want 127.0.0.1", f[1])
		}
	}
	if !found {
		t.Fatalf("no listening socket for port %d in /proc/net/tcp", port)
	}
}

func TestPortTaken(t *testing.T) {
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = Listen(port)
	if err == nil || !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), "--port") {
		t.Fatalf("want a clear 'already in use' error, got %v", err)
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, New(&fakeBackend{watch: make(chan Event)}, 0)) }()
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("Serve did not return after cancel")
	}
}

// TestHostRefused: DNS rebinding. A page on a name that resolves to
// 127.0.0.1 is same-origin with itself, so every route checks Host: only
// 127.0.0.1:PORT, localhost:PORT and [::1]:PORT are answered; anything
// else is refused, with a clear message, and logged.
func TestHostRefused(t *testing.T) {
	fb := &fakeBackend{watch: make(chan Event, 8)}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := New(fb, port)
	register(t, "http://127.0.0.1:"+strconv.Itoa(port), srv.Token())
	var logBuf lockedLog
	srv.SetLog(&logBuf)
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p := strconv.Itoa(port)
	routes := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/api/targets", ""},
		{"GET", "/api/log?session=" + sid, ""},
		{"GET", "/api/events?session=" + sid, ""},
		{"POST", "/api/send", `{"session":"` + sid + `","text":"hi"}`},
	}
	do := func(method, path, host, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Host = host
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("%s %s Host %s: %v", method, path, host, err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			return resp.StatusCode, ""
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"evil.example:" + p, "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:" + p, "127.0.0.2:" + p, "[::2]:" + p} {
		for _, r := range routes {
			code, body := do(r.method, r.path, host, r.body)
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "is not this server") || !strings.Contains(body, "open http://127.0.0.1:"+p+"/") {
				t.Errorf("%s %s with Host %q: %d %s; want 421 saying which address to open", r.method, r.path, host, code, body)
			}
		}
	}
	fb.mu.Lock()
	if len(fb.sent) != 0 {
		t.Errorf("a refused POST reached the backend: %v", fb.sent)
	}
	fb.mu.Unlock()
	logged := logBuf.String()
	for _, want := range []string{`Host "evil.example:` + p + `"`, "DNS rebinding", `refused GET "/"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("log %q does not say %q", logged, want)
		}
	}
	for _, host := range []string{"127.0.0.1:" + p, "localhost:" + p, "LOCALHOST:" + p, "[::1]:" + p} {
		for _, r := range routes[:4] {
			if code, body := do(r.method, r.path, host, r.body); code != 200 {
				t.Errorf("%s %s with Host %q: %d %s; want 200", r.method, r.path, host, code, body)
			}
		}
	}
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
