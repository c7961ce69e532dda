package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ServeWorkspace (what `relay-baton serve` calls) prints the page's
// address, serves the workspace's targets, says when the room's side or
// xdg-open is missing, and returns once its context ends.
func TestServeWorkspace(t *testing.T) {
	ws, _, _ := chatWorkspace(t)
	t.Setenv("PATH", t.TempDir()) // no xdg-open
	var out, log lockedLog
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- ServeWorkspace(ctx, ServeOptions{Workspace: ws, Port: 0, Open: true, Out: &out, Log: &log,
			Room: func(string) (Room, error) { return nil, errors.New("no room here") }})
	}()
	addr := regexp.MustCompile(`^relay-baton serve: (http://127\.0\.0\.1:\d+/)\?token=([A-Za-z0-9_-]{43})  \(workspace (.*)\)\nCtrl-C stops it\. The address carries this start's secret: anyone with it can read and send as you\.\n$`)
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m = addr.FindStringSubmatch(out.String())
	}
	if m == nil || m[3] != ws {
		t.Fatalf("address line %q (workspace %s)", out.String(), ws)
	}
	register(t, strings.TrimSuffix(m[1], "/"), m[2])
	resp, err := http.Get(m[1] + "api/targets")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), sid) {
		t.Errorf("GET /api/targets: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{"--open: no xdg-open here; open the address above yourself", "no Agent Room timeline (no room here); the chat panel works without it"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q lacks %q", log.String(), want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeWorkspace after cancel: %v", err)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("ServeWorkspace did not return after its context ended")
	}
}

// --open puts the secret on no command line (every account can read
// /proc/PID/cmdline): the opener gets the path of a 0600 file in a 0700
// folder, which sends the browser on to the address with the secret; the
// file is gone once the browser came. Chromium follows it to the page.
func TestOpenThroughPrivateFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake opener is xdg-open")
	}
	ws, _, _ := chatWorkspace(t)
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argv + ".tmp && mv " + argv + ".tmp " + argv + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, log lockedLog
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeWorkspace(ctx, ServeOptions{Workspace: ws, Port: 0, Open: true, Out: &out, Log: &log})
	}()
	defer func() { cancel(); <-done }()
	var args []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) { // a hang guard
		if b, err := os.ReadFile(argv); err == nil {
			args = b
			break
		}
	}
	if args == nil {
		t.Fatalf("xdg-open was not run; log %q", log.String())
	}
	_, full := servedAt(t, out.String())
	tok := full[strings.Index(full, "=")+1:]
	file := strings.TrimSpace(string(args))
	if strings.Contains(string(args), tok) || !filepath.IsAbs(file) || strings.Contains(file, "\n") {
		t.Fatalf("the opener's command line %q: want one file path, without the secret", args)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file for the browser: %v %v, want 0600", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(file)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("its folder: %v %v, want 0700", di, err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), full) {
		t.Fatalf("the file does not send the browser to the address: %s", b)
	}
	if strings.Contains(log.String(), tok) {
		t.Fatalf("the secret is in serve's log: %q", log.String())
	}
	if testing.Short() {
		return
	}
	bctx := browser(t)
	var path string
	if err := chromedp.Run(bctx, chromedp.Navigate("file://"+file), waitText(`#conn`, "server connected"), chromedp.Evaluate(`location.pathname + location.search`, &path)); err != nil {
		t.Fatalf("Chromium from the file: %v", err)
	}
	if path != "/" {
		t.Errorf("the browser is at %q, want / (the secret out of the address bar)", path)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) { // a hang guard
		if _, err := os.Stat(filepath.Dir(file)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the file for the browser is still there after the browser came")
		}
	}
}

// warmRoom is a room whose context says when it was first asked for.
type warmRoom struct {
	fakeRoom
	asked chan struct{}
	once  sync.Once
}

func (r *warmRoom) Context(ctx context.Context) (any, error) {
	r.once.Do(func() { close(r.asked) })
	return r.fakeRoom.Context(ctx)
}

// TestServeWorkspaceReadsTheRoomAtStart: serve computes the room's context
// (the whole log read once, on a long log the slow part of the page's
// first screen) as it starts, before any page asks for it.
func TestServeWorkspaceReadsTheRoomAtStart(t *testing.T) {
	ws, _, _ := chatWorkspace(t)
	r := &warmRoom{fakeRoom: fakeRoom{dir: filepath.Join(ws, ".ai-session"), ctx: map[string]any{}}, asked: make(chan struct{})}
	var out, log lockedLog
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeWorkspace(ctx, ServeOptions{Workspace: ws, Port: 0, Out: &out, Log: &log,
			Room: func(string) (Room, error) { return r, nil }})
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-r.asked:
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("serve did not read the room's context at its start")
	}
}
