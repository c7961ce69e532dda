package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// secretServer serves a fake backend and a fake room (with a plan.md) and
// returns the server, its base address and the backend.
func secretServer(t *testing.T) (*Server, string, *fakeBackend, *lockedLog) {
	t.Helper()
	fr := &fakeRoom{dir: filepath.Join(t.TempDir(), ".ai-session"), ctx: map[string]any{"activeAgent": "claude"}}
	if err := os.Mkdir(fr.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fr.dir, "plan.md"), []byte("## Goal\nship it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fb := &fakeBackend{watch: make(chan Event, 8)}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := New(fb, port)
	var lg lockedLog
	s.SetLog(&lg)
	s.SetRoom(fr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, ln, s); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, "http://127.0.0.1:" + strconv.Itoa(port), fb, &lg
}

// secretRoutes are every route that reads or changes anything.
var secretRoutes = []struct{ method, path, body string }{
	{"GET", "/", ""},
	{"GET", "/api/targets", ""},
	{"GET", "/api/log?session=" + sid, ""},
	{"POST", "/api/send", `{"session":"` + sid + `","text":"from another account"}`},
	{"GET", "/api/events?session=" + sid, ""},
	{"GET", "/api/ref?name=plan.md", ""},
	{"GET", "/api/timeline", ""},
	{"GET", "/api/context", ""},
	{"GET", "/api/room/stream", ""},
}

// call makes one request with c (a hang guard of a minute), with hdr set,
// and returns the status, the headers and the body (nothing of a stream).
func call(t *testing.T, c *http.Client, method, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp.StatusCode, resp.Header, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// noRedirect is a client without the secret that does not follow redirects.
var noRedirect = &http.Client{Transport: http.DefaultTransport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Another local account reaches 127.0.0.1 too: without the page's secret
// every route answers 401 saying what to do, a wrong secret of the same
// length too, and nothing reaches the backend; with the secret as a
// cookie, a Bearer header or ?token= every route works.
func TestSecretRequired(t *testing.T) {
	s, base, fb, lg := secretServer(t)
	tok := s.Token()
	if len(tok) != 43 || strings.ContainsAny(tok, "+/=") {
		t.Fatalf("secret %q: want 43 base64url characters (32 bytes)", tok)
	}
	if New(fb, 1).Token() == tok {
		t.Fatal("two servers made the same secret")
	}
	wrong := []byte(tok)
	wrong[10] ^= 1 // same length, one bit off
	bad := string(wrong)
	cookie := CookieName(s.port)
	refusals := []struct {
		name string
		hdr  map[string]string
		q    string
	}{
		{"nothing", nil, ""},
		{"wrong Bearer", map[string]string{"Authorization": "Bearer " + bad}, ""},
		{"wrong cookie", map[string]string{"Cookie": cookie + "=" + bad}, ""},
		{"wrong ?token=", nil, "token=" + bad},
		{"empty ?token=", nil, "token="},
		{"the right secret under another server's cookie name", map[string]string{"Cookie": "relay-baton-1=" + tok}, ""},
		{"the right secret as Basic", map[string]string{"Authorization": "Basic " + tok}, ""},
	}
	for _, rf := range refusals {
		for _, r := range secretRoutes {
			url := base + r.path
			if rf.q != "" {
				url += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + rf.q
			}
			code, h, body := call(t, noRedirect, r.method, url, r.body, rf.hdr)
			if code != http.StatusUnauthorized || !strings.Contains(body, "relay-baton serve printed") || h.Get("Set-Cookie") != "" {
				t.Errorf("%s %s with %s: %d %q; want 401 saying to open the address serve printed, and no cookie", r.method, r.path, rf.name, code, body)
			}
			if strings.Contains(body, tok) {
				t.Errorf("%s %s: the 401 carries the secret", r.method, r.path)
			}
		}
	}
	fb.mu.Lock()
	if len(fb.sent) != 0 {
		t.Fatalf("a request without the secret reached the backend: %v", fb.sent)
	}
	fb.mu.Unlock()

	for _, ok := range []struct {
		name string
		hdr  map[string]string
		q    string
	}{
		{"Bearer", map[string]string{"Authorization": "Bearer " + tok}, ""},
		{"bearer, any case", map[string]string{"Authorization": "bearer " + tok}, ""},
		{"cookie", map[string]string{"Cookie": cookie + "=" + tok}, ""},
		{"?token=", nil, "token=" + tok},
	} {
		for _, r := range secretRoutes {
			url := base + r.path
			if ok.q != "" {
				url += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + ok.q
			}
			code, _, body := call(t, noRedirect, r.method, url, r.body, ok.hdr)
			want := http.StatusOK
			if code != want {
				t.Errorf("%s %s with the secret as %s: %d %.200q, want %d", r.method, r.path, ok.name, code, body, want)
			}
		}
	}
	fb.mu.Lock()
	if len(fb.sent) != 4 {
		t.Errorf("backend got %d sends, want the 4 with the secret", len(fb.sent))
	}
	fb.mu.Unlock()
	// A secret pasted into the path, by mistake, is not logged either.
	for _, p := range []string{"/" + tok, "/api/" + tok, "/" + bad} {
		if code, _, _ := call(t, noRedirect, "GET", base+p, "", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s: %d, want 401", p, code)
		}
	}
	if logged := lg.String(); strings.Contains(logged, tok) || strings.Contains(logged, bad) || !strings.Contains(logged, "without the page's secret") {
		t.Errorf("serve's log: %q; want the refusals, without any secret, right or wrong", logged)
	}
}

// The first load with ?token= sets the cookie (HttpOnly, SameSite=Strict,
// Path=/, for this port) and sends the browser on to the address without
// the secret, other parameters kept; the cookie then opens every route.
// (A refresh, not a 303: see sendOn; TestOpenThroughPrivateFile has
// Chromium come from another origin, a file.)
func TestSecretCookie(t *testing.T) {
	s, base, _, _ := secretServer(t)
	code, h, body := call(t, noRedirect, "GET", base+"/?x=1&token="+s.Token(), "", nil)
	if code != http.StatusOK || !strings.Contains(body, `<meta http-equiv="refresh" content="0;url=/?x=1">`) || strings.Contains(body, s.Token()) || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("first load: %d %q; want a page that sends the browser on to /?x=1, without the secret", code, body)
	}
	if h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("Referrer-Policy %q: the address with the secret could leak through Referer", h.Get("Referrer-Policy"))
	}
	resp := &http.Response{Header: h}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("cookies %v", h.Values("Set-Cookie"))
	}
	c := cs[0]
	if c.Name != "relay-baton-"+strconv.Itoa(s.port) || c.Value != s.Token() || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || c.MaxAge != 0 || !c.Expires.IsZero() {
		t.Fatalf("cookie %+v; want HttpOnly, SameSite=Strict, Path=/, for this browser session", c)
	}
	for _, r := range secretRoutes {
		if code, _, body := call(t, noRedirect, r.method, base+r.path, r.body, map[string]string{"Cookie": c.Name + "=" + c.Value}); code != 200 {
			t.Errorf("%s %s with the cookie: %d %.200q", r.method, r.path, code, body)
		}
	}
}

// A page of another origin in the same browser cannot read or post even
// when the browser sends the cookie (SameSite keeps it from other sites;
// a page on another port of 127.0.0.1 is the same site, so the Origin
// check is what refuses it).
func TestSecretCookieFromAnotherOrigin(t *testing.T) {
	s, base, fb, _ := secretServer(t)
	cookie := CookieName(s.port) + "=" + s.Token()
	for _, origin := range []string{"http://127.0.0.1:1", "http://evil.example", "null"} {
		for _, r := range secretRoutes[1:] {
			hdr := map[string]string{"Cookie": cookie, "Origin": origin, "Sec-Fetch-Site": "same-site"}
			if code, _, body := call(t, noRedirect, r.method, base+r.path, r.body, hdr); code != http.StatusForbidden {
				t.Errorf("%s %s from %s with the cookie: %d %.200q; want 403", r.method, r.path, origin, code, body)
			}
		}
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.sent) != 0 {
		t.Fatalf("another origin posted: %v", fb.sent)
	}
}

// DNS rebinding: a page on a name that resolves to 127.0.0.1 with the
// right secret (stolen or guessed) is still refused by the Host rule.
func TestSecretDoesNotPassTheHostRule(t *testing.T) {
	s, base, _, _ := secretServer(t)
	for _, r := range secretRoutes {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		req.Host = "rebind.example:" + strconv.Itoa(s.port)
		req.Header.Set("Authorization", "Bearer "+s.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := bareClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("%s %s for Host rebind.example: %d, want 421", r.method, r.path, resp.StatusCode)
		}
	}
}
