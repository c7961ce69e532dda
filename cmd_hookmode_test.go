package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// fakeSession starts a process whose argv is a Claude Code command line
// (sh keeps it: its script does not end with a command it could exec into), standing for the session that
// runs a hook: the hooks read it through /proc/$CLAUDE_PID/cmdline.
func fakeSession(t *testing.T, claudeArgs ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", "sleep 60; :", "claude"}, claudeArgs...)...)
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sh:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// The hooks return at once, doing nothing, for a one-shot print-mode
// session and for relay-baton's own agent runs; they register (with the
// session's process) and wait for an interactive or stream-json session.
func TestHooksByMode(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	printEnv := []string{"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=sdk-cli", "CLAUDE_CODE_SESSION_ATTENDED=0"}
	tuiEnv := []string{"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_CODE_SESSION_ATTENDED=1"}
	cases := []struct {
		name   string
		args   []string
		env    []string
		serves bool
	}{
		{"interactive", []string{"--permission-mode", "default"}, tuiEnv, true},
		{"-p --input-format stream-json", []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, printEnv, true},
		{"plain -p", []string{"-p", "say hi"}, printEnv, false},
		{"-p --resume", []string{"-p", "--output-format", "stream-json", "--verbose", "--resume", chatSID, "--", "again"}, printEnv, false},
		{"agent run (stream-json argv)", []string{"-p", "--input-format", "stream-json"}, append(printEnv, "RELAY_BATON_AGENT_RUN=1"), false},
		{"agent run (TUI env)", []string{"--permission-mode", "default"}, append(tuiEnv, "RELAY_BATON_AGENT_RUN=1"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			sess := fakeSession(t, c.args...)
			env := append([]string{"CLAUDE_PID=" + strconv.Itoa(sess.Process.Pid)}, c.env...)
			start := `{"session_id":"` + chatSID + `","cwd":"` + ws + `","transcript_path":"/x/` + chatSID + `.jsonl","hook_event_name":"SessionStart","source":"startup"}`
			for _, sub := range []string{"session-start", "prompt-submit", "stop"} {
				if code, out, errOut := relayBaton(t, context.Background(), env, start, "hook", sub); code != 0 || out != "" || errOut != "" {
					t.Fatalf("hook %s: %q %q exit %d", sub, out, errOut, code)
				}
			}
			s, _ := conversation.OpenSession(ws, chatSID)
			_, registered := s.Registration()
			p, recorded := s.Process()
			if registered != c.serves || recorded != c.serves {
				t.Fatalf("registered %v, process recorded %v; want %v", registered, recorded, c.serves)
			}
			ts, _ := conversation.ListTargets(ws)
			if c.serves != (len(ts) == 1 && ts[0].Lead && ts[0].PID == sess.Process.Pid) {
				t.Fatalf("targets %+v (process %+v)", ts, p)
			}
			// The waiter: a served session's waiter waits (until its
			// --timeout), another's returns at once: given an hour, one
			// that waited is killed by the hang guard and fails on its
			// exit code.
			timeout := "1h"
			if c.serves {
				s.Ensure()
				timeout = "1500ms"
			}
			guard, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			t0 := time.Now()
			code, _, _ := relayBaton(t, guard, env, start, "hook", "wait", "--timeout", timeout)
			took := time.Since(t0)
			if code != 0 || (c.serves && took < 1500*time.Millisecond) {
				t.Fatalf("hook wait --timeout %s: exit %d after %s (serves=%v)", timeout, code, took, c.serves)
			}
			if !c.serves {
				if _, err := os.Stat(filepath.Join(ws, ".claude")); err == nil {
					t.Fatal("a hook of an unserved session wrote into the workspace")
				}
			}
		})
	}
}

// The waiter of a session whose process ends gives up (so it stops holding
// the waiter lock), and the session leaves the default target list.
func TestHookWaitEndsWithItsSession(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	ws, s := chatWorkspace(t)
	sess := fakeSession(t, "--permission-mode", "default")
	env := []string{"CLAUDE_PID=" + strconv.Itoa(sess.Process.Pid), "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli"}
	done := make(chan time.Duration, 1)
	go func() {
		t0 := time.Now()
		relayBaton(t, context.Background(), env, payload(ws, ""), "hook", "wait", "--timeout", "1h")
		done <- time.Since(t0)
	}()
	deadline := time.Now().Add(2 * time.Minute) // hang guards, not bounds
	for !s.Waiting() {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never took its lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ts, _ := conversation.ListTargets(ws); len(ts) != 1 || !ts[0].Waiting {
		t.Fatalf("targets while waiting: %+v", ts)
	}
	sess.Process.Kill()
	sess.Wait()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // its --timeout is an hour
		t.Fatal("the waiter still waits 2 min after its session's process ended")
	}
	if ts, _ := conversation.ListTargets(ws); len(ts) != 0 {
		t.Fatalf("an ended session is still offered: %+v", ts)
	}
	code, out, _ := runCLI(t, "", "targets", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "No running Claude Code session") || !strings.Contains(out, "1 earlier session(s)") || !strings.Contains(out, "targets --all") {
		t.Fatalf("targets: %q", out)
	}
	code, out, _ = runCLI(t, "", "targets", "--all", "--workspace", ws)
	if code != 0 || !strings.Contains(out, chatSID) || !strings.Contains(out, "ended") || strings.Contains(out, "* ") {
		t.Fatalf("targets --all: %q", out)
	}
	_, out, _ = runCLI(t, "", "targets", "--all", "--json", "--workspace", ws)
	var ts []conversation.Target
	if json.Unmarshal([]byte(out), &ts) != nil || len(ts) != 1 || ts[0].State != procfacts.Ended || ts[0].Lead || ts[0].PID != sess.Process.Pid {
		t.Fatalf("targets --all --json: %s", out)
	}
	if code, _, errOut := runCLI(t, "", "send", "--lead", "--workspace", ws, "hi"); code == 0 || !strings.Contains(errOut, "no running Claude Code session") {
		t.Fatalf("send --lead to an ended session: exit %d %q", code, errOut)
	}
}
