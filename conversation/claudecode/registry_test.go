//go:build linux || darwin

package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// testSID is a session id in the shape Claude Code writes.
const testSID = "0b7e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5b"

// fakeRegistry is Claude Code's registry as a test writes it.
func newFakeRegistry(t *testing.T) *testkit.FakeRegistry {
	t.Helper()
	f := testkit.NewFakeRegistry(t, ForgetRegistry)
	t.Setenv(agents.ClaudeBinEnv, f.Bin)
	t.Setenv(NoRegistryEnv, "")
	return f
}

// liveProcess is a process that runs until the test ends (or is killed).
func liveProcess(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestParseRegistry(t *testing.T) {
	// As claude 2.1.332 printed it (a TUI at a permission prompt).
	got, err := parseRegistry([]byte(`[{"pid":4242,"cwd":"/w","kind":"interactive","startedAt":1764889200000,"sessionId":"0B7E2C1A-3F4D-4E5F-8A9B-0C1D2E3F4A5B","name":"demo","status":"waiting","waitingFor":"permission prompt"},{"pid":0,"sessionId":"x"}]`))
	if err != nil || len(got) != 1 || got[0].SessionID != testSID || got[0].WaitingFor != "permission prompt" || got[0].StartedAt != 1764889200000 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := parseRegistry([]byte("Usage: claude agents")); err == nil {
		t.Fatal("help text parsed as a list")
	}
}

// targets --everywhere: every listed session, any folder, its cwd inert.
func TestWriteEverywhere(t *testing.T) {
	reg := newFakeRegistry(t)
	reg.Set([]Session{{PID: 42, Cwd: "/elsewhere/\x1b[2Jrepo", SessionID: testSID, Status: StatusWaiting, WaitingFor: "permission prompt"}})
	var b strings.Builder
	if err := WriteEverywhere(context.Background(), &b, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{testSID, "waiting for its user (permission prompt)", "42", "/elsewhere/^[[2Jrepo", "relay-baton send --workspace CWD --session ID"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("an escape reached the output:\n%q", b.String())
	}
}

// A send to a session the last answer named, whose process still runs as
// then, needs no new call of claude; once that process ends, it does.
func TestRememberedRegistry(t *testing.T) {
	reg := newFakeRegistry(t)
	cmd := liveProcess(t)
	reg.Set([]Session{{PID: cmd.Process.Pid, Cwd: "/w", SessionID: testSID, Status: StatusIdle}})
	if _, err := Registry(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg.Old() // claude answers no more
	if l, ok, err := FindSession(context.Background(), testSID); !ok || err != nil || l.PID != cmd.Process.Pid {
		t.Fatalf("remembered: %+v %v %v", l, ok, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, ok, err := FindSession(context.Background(), testSID); ok || !errors.Is(err, errNoRegistry) {
		t.Fatalf("an ended session answered from the file: %v %v", ok, err)
	}
	// A file planted in a repository is never read: only the user's cache folder.
	if p := RegistryFile(); !strings.HasPrefix(p, os.Getenv("XDG_CACHE_HOME")) {
		t.Fatalf("kept at %s", p)
	}
}

// A read of the registry ends with its caller's context, says so
// (errors.Is holds through errNoRegistry), and leaves no cached answer: the
// next caller reads the registry again.
func TestRegistryReadEndsWithContext(t *testing.T) {
	reg := newFakeRegistry(t)
	bin, started := testkit.HangingExe(t, "claude")
	t.Setenv(agents.ClaudeBinEnv, bin)
	ForgetRegistry()
	err := testkit.Cancelled(t, "the registry read", started, func(ctx context.Context) error {
		_, err := Registry(ctx)
		return err
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errNoRegistry) {
		t.Fatalf("registry error %v, want one wrapping errNoRegistry and context.Canceled", err)
	}
	// The same claude binary answering now: the cancellation was not kept.
	script := "#!/bin/sh\ncat " + reg.List + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]Session{{PID: 42, Cwd: "/w", SessionID: testSID, Status: StatusIdle}})
	if err := os.WriteFile(reg.List, b, 0o600); err != nil { // not reg.set: the cache stays as the cancelled read left it
		t.Fatal(err)
	}
	if list, err := Registry(context.Background()); err != nil || len(list) != 1 {
		t.Fatalf("after a cancelled read: %+v %v, want the registry read again", list, err)
	}
}
