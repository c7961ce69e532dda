package server

import (
	"bufio"
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The real `relay-baton serve`, as another account on the machine would
// try it: without the secret the targets, the chat log, a send, the event
// stream and /api/ref answer 401; with the printed address's secret they
// work; and the secret is in no file relay-baton writes (the workspace,
// .ai-session, HOME) nor on its standard error, only in the address it
// printed.
func TestSecretRealServe(t *testing.T) {
	ws, s, _ := chatWorkspace(t)
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rb(t, ws, "note", "a note before serve")
	if err := os.WriteFile(filepath.Join(ws, ".ai-session", "plan.md"), []byte("## Goal\nship it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command(rbBin, "serve", "--port", "0", "--path", ws)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedLog
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	var rest bytes.Buffer
	var restMu sync.Mutex
	restDone := make(chan struct{})
	go func() {
		defer close(restDone)
		b := make([]byte, 4096)
		for {
			n, err := br.Read(b)
			restMu.Lock()
			rest.Write(b[:n])
			restMu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	base, full := servedAt(t, line)
	tok := full[strings.Index(full, "=")+1:]

	routes := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/api/targets", ""},
		{"GET", "/api/log?session=" + sid, ""},
		{"POST", "/api/send", `{"session":"` + sid + `","text":"from another account"}`},
		{"GET", "/api/events?session=" + sid, ""},
		{"GET", "/api/ref?name=plan.md", ""},
		{"GET", "/api/timeline", ""},
		{"GET", "/api/room/stream", ""},
	}
	wrong := []byte(tok)
	wrong[0] ^= 2
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer " + string(wrong)}} {
		for _, r := range routes {
			if code, _, body := call(t, noRedirect, r.method, base+r.path, r.body, hdr); code != http.StatusUnauthorized {
				t.Errorf("%s %s without the secret (%v): %d %.200q, want 401", r.method, r.path, hdr, code, body)
			}
		}
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("a send without the secret reached the inbox: depth %d", q.Depth)
	}
	for _, r := range routes {
		code, _, body := call(t, noRedirect, r.method, base+r.path, strings.Replace(r.body, "from another account", "from the user", 1), map[string]string{"Authorization": "Bearer " + tok})
		if code != http.StatusOK {
			t.Errorf("%s %s with the secret: %d %.200q", r.method, r.path, code, body)
		}
		if r.path == "/api/targets" && !strings.Contains(body, sid) {
			t.Errorf("targets with the secret: %s", body)
		}
		if r.path == "/api/ref?name=plan.md" && !strings.Contains(body, "ship it") {
			t.Errorf("plan.md with the secret: %q", body)
		}
	}
	if code, h, _ := call(t, noRedirect, "GET", full, "", nil); code != http.StatusOK || !strings.Contains(h.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("the printed address: %d %v", code, h)
	}
	if code, _, _ := call(t, noRedirect, "GET", base+"/api/targets?token="+tok, "", nil); code != 200 {
		t.Errorf("?token= on an API route: %d", code)
	}
	if q, _ := s.Queue(); q.Depth != 1 {
		t.Fatalf("inbox depth %d, want the 1 message sent with the secret", q.Depth)
	}
	stop()
	<-restDone
	if !strings.Contains(stderr.String(), "without the page's secret") {
		t.Errorf("serve's standard error does not log the refusals: %q", stderr.String())
	}
	restMu.Lock()
	for what, text := range map[string]string{"standard error": stderr.String(), "standard output after the address": rest.String()} {
		if strings.Contains(text, tok) {
			t.Errorf("the secret is on serve's %s: %q", what, text)
		}
	}
	restMu.Unlock()
	files := 0
	for _, root := range []string{ws, home} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			files++
			if bytes.Contains(b, []byte(tok)) {
				t.Errorf("the secret is written in %s", p)
			}
			return nil
		})
	}
	if files < 3 {
		t.Fatalf("only %d files looked at: the workspace has conversation.jsonl, plan.md, the inbox", files)
	}
}
