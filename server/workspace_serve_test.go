package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
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
