package server

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// debianChromium is the browser itself behind Debian's /usr/bin/chromium,
// a shell wrapper whose /etc/chromium.d/dev-shm prints "[: unexpected
// operator" when findmnt answers with more than one line; the flags it
// adds are chromedp's defaults (--disable-dev-shm-usage) or not needed
// headless.
const debianChromium = "/usr/lib/chromium/chromium"

// chromium finds Debian's chromium (the binary, not its wrapper). In CI
// (CI=true) a missing browser fails the test: .ci/run installs it.
func chromium(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat(debianChromium); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return debianChromium
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found: .ci/run should have installed it (apt-get install chromium)")
	}
	t.Skip("chromium not found (apt-get install chromium)")
	return ""
}

// artifactDir is where tests leave screenshots to look at.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("RELAY_BATON_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	return t.TempDir()
}

// browser starts headless chromium with the flags this machine needs.
func browser(t testing.TB) context.Context {
	t.Helper()
	// Not t.TempDir: chromium may still be writing its profile while the
	// test's cleanup runs, and a failed RemoveAll would fail the test.
	profile, err := os.MkdirTemp("", "rb-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		// Chromium's singleton socket folder (org.chromium.Chromium.*)
		// goes to TMPDIR: inside the profile, it is removed with it.
		chromedp.Env("TMPDIR="+profile),
		chromedp.WindowSize(1100, 760),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute) // a hang guard for the whole page session
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return ctx
}

// waitText polls until the element's text contains want.
func waitText(sel, want string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			var got string
			if err := chromedp.Text(sel, &got, chromedp.ByQuery).Do(ctx); err == nil && strings.Contains(got, want) {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// panelScenario drives the page through one exchange: pick the target,
// type, send with Ctrl+Enter, see it queued; then afterSend makes the
// delivery and the reply happen (however the backend does that), and the
// page must show the reply and the end of the turn.
func panelScenario(t *testing.T, base, session, text string, sent func() bool, afterSend func(), reply string) {
	t.Helper()
	ctx := browser(t)
	shot := filepath.Join(artifactDir(t), "panel-"+strings.ReplaceAll(t.Name(), "/", "_")+".png")
	var png []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL(t, base)),
		chromedp.WaitReady(`#target option[value="`+session+`"]`, chromedp.ByQuery),
		chromedp.SetValue(`#target`, session, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("target").dispatchEvent(new Event("change"))`, nil),
		chromedp.WaitEnabled(`#text`, chromedp.ByQuery),
		chromedp.Click(`#text`, chromedp.ByQuery),
		chromedp.SendKeys(`#text`, text, chromedp.ByQuery),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)),
		waitText(`#activity`, "queued"),
		waitText(`#log`, text),
	)
	if err != nil {
		t.Fatalf("send from the page: %v", err)
	}
	if !sent() {
		t.Fatal("the page showed 'queued' but the backend has no message")
	}
	var draft string
	if err := chromedp.Run(ctx, chromedp.Value(`#text`, &draft, chromedp.ByQuery)); err != nil || draft != "" {
		t.Fatalf("composer not cleared after send: %q %v", draft, err)
	}
	afterSend()
	err = chromedp.Run(ctx,
		waitText(`#log`, "delivered via hook"),
		waitText(`#log`, reply),
		waitText(`#activity`, "end of turn"),
		chromedp.FullScreenshot(&png, 100),
	)
	if err != nil {
		t.Fatalf("reply on the page: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}

// serveFake serves a fake backend on a free loopback port; stop shuts the
// server down and waits for it.
func serveFake(t *testing.T) (fb *fakeBackend, base string, stop func()) {
	t.Helper()
	fb = &fakeBackend{watch: make(chan Event, 8)}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	srv := New(fb, port)
	srv.SetLog(nil)
	base = "http://127.0.0.1:" + strconv.Itoa(port)
	register(t, base, srv.Token())
	go func() { Serve(ctx, ln, srv); close(served) }()
	stop = func() { cancel(); <-served }
	t.Cleanup(stop)
	return fb, base, stop
}

func TestPanelInBrowserFakeBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	fb, base, _ := serveFake(t)
	panelScenario(t, base, sid, "hello from the browser",
		func() bool {
			fb.mu.Lock()
			defer fb.mu.Unlock()
			return len(fb.sent) == 1 && fb.sent[0] == "dashboard:hello from the browser"
		},
		func() {
			fb.watch <- Event{Name: "delivered", Data: map[string]string{"lane": "hook"}}
			fb.watch <- Event{Name: "thinking", Data: map[string]string{}}
			fb.watch <- Event{Name: "text", Data: map[string]string{"text": "the reply from the session"}}
			fb.watch <- Event{Name: "end_turn", Data: map[string]string{}}
		},
		"the reply from the session")
}

// TestPanelDraftAndUnreachable: a half-typed draft survives a reload, and
// when the server goes away the composer is disabled with the reason.
func TestPanelDraftAndUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	fb, base, stop := serveFake(t)
	ctx := browser(t)
	var draft string
	var disabled bool
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL(t, base)),
		chromedp.WaitEnabled(`#text`, chromedp.ByQuery),
		chromedp.SendKeys(`#text`, "half a thought", chromedp.ByQuery),
		chromedp.Reload(),
		chromedp.WaitEnabled(`#text`, chromedp.ByQuery),
		chromedp.Value(`#text`, &draft, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if draft != "half a thought" {
		t.Fatalf("draft after reload: %q", draft)
	}
	stop()
	err = chromedp.Run(ctx,
		waitText(`#reason`, "not reachable"),
		chromedp.Evaluate(`document.getElementById("text").disabled`, &disabled),
		chromedp.Value(`#text`, &draft, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !disabled || draft != "half a thought" {
		t.Fatalf("server down: composer disabled=%v, draft %q (want disabled, draft kept)", disabled, draft)
	}
	if len(fb.sent) != 0 {
		t.Fatalf("nothing was sent, backend has %v", fb.sent)
	}
}
