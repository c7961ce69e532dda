package server

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/creack/pty"

	"github.com/relay-baton/relay-baton/events"
)

// gitRepo makes an empty git repository.
func gitRepo(t testing.TB) string {
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

// ptyRoom starts `relay-baton chat` in dir on a pseudo-terminal.
type ptyRoom struct {
	f   *os.File
	mu  sync.Mutex
	buf bytes.Buffer
}

func startRoom(t *testing.T, dir string, env ...string) *ptyRoom {
	t.Helper()
	cmd := exec.Command(rbBin, "chat")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "TERM=xterm"), env...)
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
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
	return r
}

func (r *ptyRoom) until(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(browserGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
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

// browserGuard bounds one wait on the page: a hang guard, never a bound on
// how fast a loaded machine renders.
const browserGuard = 2 * time.Minute

// within runs actions under a hang guard of at least browserGuard (d, the
// time they take on a quiet machine, only documents the expectation).
// press clicks the button sel once it is enabled, by the page's own
// click() rather than a mouse event at coordinates taken a moment before:
// a timeline growing above the room (a loaded machine draws late) moves
// the button between the two, and the mouse then clicks beside it.
func press(sel string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.WaitEnabled(sel, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector(`+jsString(sel)+`).click()`, nil),
	}
}

func within(ctx context.Context, d time.Duration, actions ...chromedp.Action) error {
	c, cancel := context.WithTimeout(ctx, max(d, browserGuard))
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
	ctx, _, _ := pageIn(t, dir, nil)
	err := chromedp.Run(ctx,
		waitText(`#turns`, "logged before the page loaded"),
		waitText(`#ctx-agent`, "claude"),
		waitText(`#ctx-plan`, "old, gate: lacks"),
		waitText(`#readonly`, "An agent runs only after its preview is confirmed with Run"),
	)
	if err != nil {
		t.Fatalf("page load: %v", err)
	}
	// An event appended while the page is open shows without a reload (on
	// a quiet machine within a second); a reply carrying markup is shown as
	// text.
	hostile := `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b id="injected">bold</b>`
	rb(t, dir, "note", "appended live "+hostile)
	if err := within(ctx, time.Second, waitText(`#turns`, "appended live <script>window.pwned=1</script>")); err != nil {
		t.Fatalf("live event not shown without a reload: %v", err)
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
	// A chat reply names the session's transcript, an absolute path outside
	// .ai-session that /api/ref refuses: no button for it. A cancelled run
	// is "cancelled" in the context, not "exit -1".
	reply := events.New("s", events.RoleOrchestrator, events.KindChatReply, "the reply")
	reply.Refs = map[string]string{"transcript": "/home/me/.claude/projects/-p/0ea7beef-1234-4abc-8def-0123456789ab.jsonl"}
	run := events.New("s", events.RoleClaude, events.KindAgentRun, "claude ask: cancelled after 3s")
	run.Meta = events.MetaJSON(`{"agent":"claude","cancelled":true,"command":"ask","confirmed":true,"durationMs":3000,"exitCode":-1,"ran":true}`)
	ev := events.New("s", events.RoleRelayBaton, events.KindPlan, "plan.md written by claude")
	ev.Refs = map[string]string{"plan": "plan.md"}
	appendEvents(t, dir, reply, run, ev)
	var refs int
	if err := within(ctx, 10*time.Second, waitText(`#turns`, "plan.md written by claude"), waitText(`#ctx-last`, "claude /ask cancelled"),
		chromedp.Evaluate(`document.querySelectorAll("#turns .ref").length`, &refs)); err != nil {
		t.Fatalf("context after a cancelled run: %v", err)
	}
	if refs != 1 {
		t.Fatalf("%d ref buttons, want 1 (plan.md; not the transcript outside .ai-session)", refs)
	}
	var png, before []byte
	err = chromedp.Run(ctx,
		waitText(`#turns`, "plan.md written by claude"),
		chromedp.FullScreenshot(&before, 100),
		chromedp.Click(`#turns .ref`, chromedp.ByQuery),
		waitText(`#reftext`, "ship it"),
		waitText(`#refname`, ".ai-session/plan.md"),
		chromedp.FullScreenshot(&png, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"room-page.png": before, "room-page-ref.png": png} {
		shot := filepath.Join(artifactDir(t), name)
		if err := os.WriteFile(shot, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shot)
	}
}

// writeLogFile writes the events gen puts straight to the log at path (one
// buffered write per MB), far faster than appends.
func writeLogFile(tb testing.TB, path string, gen func(put func(events.Event))) {
	tb.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	gen(func(e events.Event) {
		line = append(events.AppendJSON(line[:0], e), '\n')
		w.Write(line)
	})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// writeBigLog writes n message events to the log at path.
func writeBigLog(tb testing.TB, path string, n int) {
	tb.Helper()
	writeLogFile(tb, path, func(put func(events.Event)) {
		for i := range n {
			role := events.RoleUser
			if i%2 == 1 {
				role = events.RoleClaude
			}
			put(events.New("s", role, events.KindMessage, "event number "+strconv.Itoa(i)))
		}
	})
}

// TestRoomPagePagesBack: with a large log the page shows only the newest
// page, and scrolling to the top loads the one before it.
func TestRoomPagePagesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	writeBigLog(t, filepath.Join(dir, ".ai-session", "conversation.jsonl"), 20000)
	ctx, _, _ := pageIn(t, dir, nil)
	var shown, after int
	var first string
	err := chromedp.Run(ctx,
		waitText(`#turns`, "event number 19999"),
		chromedp.Evaluate(`document.querySelectorAll("#turns .ev").length`, &shown),
		chromedp.Evaluate(`document.getElementById("timeline").scrollTop = 0`, nil),
		waitText(`#turns`, "event number 19600"),
		chromedp.Evaluate(`document.querySelectorAll("#turns .ev").length`, &after),
		chromedp.Text(`#turns .ev .t`, &first, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if shown != DefaultTimelinePage {
		t.Fatalf("first render holds %d events, want the newest %d", shown, DefaultTimelinePage)
	}
	if after < 2*DefaultTimelinePage || after > 4*DefaultTimelinePage {
		t.Fatalf("after scrolling up: %d events (want one or two more pages)", after)
	}
	// Filtering asks the server again, from the end.
	var roles []string
	err = chromedp.Run(ctx,
		chromedp.SetValue(`#f-role`, "claude", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("f-role").dispatchEvent(new Event("change"))`, nil),
		waitText(`#tl-status`, "200 events shown"),
		chromedp.Evaluate(`[...new Set([...document.querySelectorAll("#turns .ev .who")].map(e => e.textContent))]`, &roles),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0] != "claude" {
		t.Fatalf("role filter shows %v", roles)
	}
}

// TestRoomPageDegrades: with the server gone, or opened from file://, the
// timeline says it is not reachable (and the chat composer is disabled, as
// before).
func TestRoomPageDegrades(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	rb(t, dir, "note", "hello")
	cmd := exec.Command(rbBin, "serve", "--port", "0")
	cmd.Dir = dir
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	base, _ := servedAt(t, line)
	ctx := browser(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(pageURL(t, base)), waitText(`#turns`, "hello")); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	var disabled bool
	if err := within(ctx, 15*time.Second,
		waitText(`#tl-status`, "not reachable"),
		waitText(`#reason`, "not reachable"),
		chromedp.Evaluate(`document.getElementById("text").disabled`, &disabled),
	); err != nil || !disabled {
		t.Fatalf("server gone: %v (composer disabled %v)", err, disabled)
	}
	page, err := filepath.Abs("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if err := within(ctx, 15*time.Second, chromedp.Navigate("file://"+page), waitText(`#tl-status`, "not reachable")); err != nil {
		t.Fatalf("file://: %v", err)
	}
}

// TestPageClosesItsStreamsWhenLeft: a page left for another (a reload, a
// link) closes its event streams at once. A browser opens six connections
// to one host, and a page kept in its back/forward cache held its three
// open: the fourth reload in a row waited about a minute for a
// connection.
func TestPageClosesItsStreamsWhenLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	rb(t, dir, "note", "hello")
	ctx, _, _ := pageIn(t, dir, nil)
	var open, closed bool
	if err := within(ctx, 10*time.Second,
		waitText(`#turns`, "hello"),
		waitText(`#room-status`, "ready"),
		waitJS(`room.es !== null && desk.es !== null && room.es.readyState === EventSource.OPEN && desk.es.readyState === EventSource.OPEN`),
		chromedp.Evaluate(`room.es.readyState === EventSource.OPEN`, &open),
		chromedp.Evaluate(`window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: true })); [state.es, room.es, desk.es].every((es) => !es || es.readyState === EventSource.CLOSED)`, &closed),
	); err != nil {
		t.Fatal(err)
	}
	if !open || !closed {
		t.Fatalf("streams open before pagehide %v, all closed after it %v", open, closed)
	}
}
