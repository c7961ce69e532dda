package server

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/creack/pty"

	"github.com/relay-baton/relay-baton/events"
)

// gitRepo makes an empty git repository.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// rb runs the built relay-baton in dir.
func rb(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(rbBin, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("relay-baton %v: %v\n%s", args, err, out)
	}
}

// serveRepo starts the real `relay-baton serve --port 0` in dir and
// returns the page's address.
func serveRepo(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(rbBin, "serve", "--port", "0")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	m := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if m == "" {
		t.Fatalf("no address in %q", line)
	}
	go func() { _, _ = bufio.NewReader(out).WriteTo(os.Stderr) }()
	return m
}

// ptyRoom starts `relay-baton chat` in dir on a pseudo-terminal.
type ptyRoom struct {
	f   *os.File
	mu  sync.Mutex
	buf bytes.Buffer
}

func startRoom(t *testing.T, dir string) *ptyRoom {
	t.Helper()
	cmd := exec.Command(rbBin, "chat")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	r := &ptyRoom{f: f}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			r.mu.Lock()
			r.buf.Write(b[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		f.Write([]byte{4}) // Ctrl-D leaves the room
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
	return r
}

func (r *ptyRoom) until(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		ok := strings.Contains(r.buf.String(), want)
		r.mu.Unlock()
		if ok {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("room: no %q on screen:\n%s", want, r.buf.String())
}

// within runs actions with their own deadline.
func within(ctx context.Context, d time.Duration, actions ...chromedp.Action) error {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Run(c, actions...)
}

// TestRoomPageInBrowser drives the second screen as a person would: the
// real `relay-baton serve` in a repository, the real room on a pty beside
// it, the page in headless Chromium.
func TestRoomPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	rb(t, dir, "note", "logged before the page loaded")
	os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte("## Goal\nship it\n"), 0o600)
	base := serveRepo(t, dir)
	ctx := browser(t)

	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/"),
		waitText(`#turns`, "logged before the page loaded"),
		waitText(`#ctx-agent`, "claude"),
		waitText(`#ctx-plan`, "old, gate: lacks"),
		waitText(`#readonly`, "approved only in the terminal"),
	)
	if err != nil {
		t.Fatalf("page load: %v", err)
	}
	// An event appended while the page is open shows within a second,
	// without a reload; a reply carrying markup is shown as text.
	hostile := `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b id="injected">bold</b>`
	rb(t, dir, "note", "appended live "+hostile)
	if err := within(ctx, time.Second, waitText(`#turns`, "appended live <script>window.pwned=1</script>")); err != nil {
		t.Fatalf("live event not shown within 1 s: %v", err)
	}
	var pwned bool
	var injected int
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`window.pwned !== undefined`, &pwned),
		chromedp.Evaluate(`document.querySelectorAll("#turns b#injected, #turns img, #turns script").length`, &injected),
	); err != nil {
		t.Fatal(err)
	}
	if pwned || injected != 0 {
		t.Fatalf("markup from the log was rendered as HTML (pwned=%v, %d elements)", pwned, injected)
	}
	// The room, on a real terminal, switches agents: the context panel
	// follows.
	room := startRoom(t, dir)
	room.until(t, "claude›")
	room.f.Write([]byte("/agent codex\r"))
	room.until(t, "active agent: codex")
	if err := within(ctx, 10*time.Second, waitText(`#ctx-agent`, "codex"), waitText(`#turns`, "/agent codex")); err != nil {
		t.Fatalf("context after /agent codex: %v", err)
	}
	// A plan ref opens read-only in the page, as text.
	lg, err := events.OpenLog(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ev := events.New("s", events.RoleRelayBaton, events.KindPlan, "plan.md written by claude")
	ev.Refs = map[string]string{"plan": "plan.md"}
	if err := lg.Append(ev); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	var png []byte
	err = chromedp.Run(ctx,
		waitText(`#turns`, "plan.md written by claude"),
		chromedp.Click(`#turns .ref`, chromedp.ByQuery),
		waitText(`#reftext`, "ship it"),
		waitText(`#refname`, ".ai-session/plan.md"),
		chromedp.FullScreenshot(&png, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifactDir(t), "room-page.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}
