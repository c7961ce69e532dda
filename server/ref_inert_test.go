package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostilePlan is a plan.md written to attack whoever reads it: clear the
// screen, write the clipboard (OSC 52), ring, an 8-bit CSI (C1 0x9b, as a
// character and as a stray byte), a right-to-left override and a
// zero-width space.
const hostilePlan = "## Goal\nA\x1b[2JB\x1b]52;c;cHduZWQ=\x07C\x07D\u009b31mE\x9bF\u202eG\u200bH\r\n"

// The one rule for output on /api/ref: what a curl prints on a terminal,
// and what the page shows, is the file through render.Inert.
func TestRefHostileInert(t *testing.T) {
	fr, _, base := newRoomServer(t)
	if err := os.WriteFile(filepath.Join(fr.dir, "plan.md"), []byte(hostilePlan), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/api/ref?name=plan.md")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("plan.md: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, raw := range []string{"\x1b", "\x07", "\u009b", "\x9b", "\u202e", "\u200b", "\r"} {
		if strings.Contains(body, raw) {
			t.Errorf("/api/ref returns %q raw: %q", raw, body)
		}
	}
	want := "## Goal\nA^[[2JB^[]52;c;cHduZWQ=^GC^GD\\u009b31mE\\x9bF<U+202E>G<U+200B>H^M\n"
	if body != want {
		t.Errorf("/api/ref:\n got %q\nwant %q", body, want)
	}
}

// The page runs no inline script: its script is /app.js, and the CSP
// allows scripts from the server itself only, so markup that ever reached
// the page could not run.
func TestPageNoInlineScript(t *testing.T) {
	_, _, base := newTest(t)
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	var script string
	for _, d := range strings.Split(csp, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "script-src ") {
			script = d
		}
	}
	if script != "script-src 'self'" || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q: want script-src 'self' only", csp)
	}
	page := string(b)
	if strings.Count(page, "<script") != 1 || !strings.Contains(page, `<script src="app.js"></script>`) || strings.Contains(page, " onclick=") {
		t.Errorf("the page has inline script:\n%s", page)
	}
	js, err := http.Get(base + "/app.js")
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := io.ReadAll(js.Body)
	js.Body.Close()
	if js.StatusCode != 200 || !strings.Contains(js.Header.Get("Content-Type"), "javascript") || !strings.Contains(string(jb), "function visible(") {
		t.Fatalf("/app.js: %d %s", js.StatusCode, js.Header.Get("Content-Type"))
	}
	if code, _, _ := call(t, bareClient, "GET", base+"/app.js", "", nil); code != http.StatusUnauthorized {
		t.Errorf("/app.js without the secret: %d, want 401", code)
	}
}
