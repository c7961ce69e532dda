package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// The tests of issue 14 (hostile pages, hostile repositories, a crash in
// the middle of a claim), in the bad-input style: a clear message, nothing
// lost, no hang.

func evPayload(cwd, event, extra string) string {
	return `{"session_id":"` + chatSID + `","cwd":"` + cwd + `","hook_event_name":"` + event + `"` + extra + `}`
}

func errorsLog(s *conversation.Session) string {
	b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	return string(b)
}

// TestHookObeysEvent: each hook subcommand serves its own event only. A
// payload of another event (or none) claims nothing, prints nothing, and is
// recorded in errors.log.
func TestHookObeysEvent(t *testing.T) {
	ws, s := chatWorkspace(t)
	m, err := s.Enqueue("room", "for the right hook only")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cases := []struct {
		sub, event string
	}{
		{"stop", "UserPromptSubmit"},
		{"stop", "SessionStart"},
		{"stop", ""},
		{"wait", "UserPromptSubmit"},
		{"wait", "PreToolUse"},
		{"prompt-submit", "Stop"},
		{"session-start", "Stop"},
	}
	for _, c := range cases {
		os.Remove(filepath.Join(s.Dir(), "errors.log"))
		in := evPayload(ws, c.event, "")
		if c.event == "" {
			in = `{"session_id":"` + chatSID + `","cwd":"` + ws + `"}`
		}
		args := []string{"hook", c.sub}
		if c.sub == "wait" {
			args = append(args, "--timeout", "2s")
		}
		start := time.Now()
		out, errOut, code := relayBaton(t, ctx, nil, in, args...)
		if out != "" || errOut != "" || code != 0 {
			t.Errorf("hook %s given %q: stdout %q stderr %q exit %d; want silence", c.sub, c.event, out, errOut, code)
		}
		if time.Since(start) > 1500*time.Millisecond {
			t.Errorf("hook %s given %q took %v: it went on to wait", c.sub, c.event, time.Since(start))
		}
		if st, err := s.State(m.ID); err != nil || !st.Queued {
			t.Fatalf("hook %s given a %q payload touched the message: %+v %v", c.sub, c.event, st, err)
		}
		log := errorsLog(s)
		for _, want := range []string{"hook " + c.sub + ": payload has", "ignored, nothing claimed", "hook install"} {
			if !strings.Contains(log, want) {
				t.Errorf("hook %s given %q: errors.log %q does not say %q", c.sub, c.event, log, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "session.json")); err == nil {
		t.Error("session-start given a Stop payload registered the session")
	}
	if s.Busy(time.Now()) {
		t.Error("prompt-submit given a Stop payload marked the session busy")
	}
	// The right event still delivers.
	out, _, _ := relayBaton(t, ctx, nil, evPayload(ws, "Stop", ""), "hook", "stop")
	if !strings.Contains(out, m.ID) {
		t.Fatalf("hook stop given a Stop payload: %q", out)
	}
}

// TestHookSubdirCwd: without CLAUDE_PROJECT_DIR, every hook called with a
// sub-folder as cwd resolves the same workspace (the folder holding the
// session's chat folder), not a second chat folder in the sub-folder.
func TestHookSubdirCwd(t *testing.T) {
	ws, s := chatWorkspace(t)
	os.Mkdir(filepath.Join(ws, ".git"), 0o700)
	sub := filepath.Join(ws, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, e, c := relayBaton(t, ctx, nil, evPayload(sub, "UserPromptSubmit", ""), "hook", "prompt-submit"); c != 0 || e != "" {
		t.Fatalf("prompt-submit: %q %d", e, c)
	}
	if !s.Busy(time.Now()) {
		t.Error("prompt-submit from a sub-folder did not mark the session busy at the root")
	}
	m, _ := s.Enqueue("room", "queued at the root")
	out, _, _ := relayBaton(t, ctx, nil, evPayload(sub, "Stop", ""), "hook", "stop")
	if !strings.Contains(out, m.ID) {
		t.Fatalf("stop from a sub-folder did not see the message queued at the root: %q", out)
	}
	m2, _ := s.Enqueue("room", "for the waiter")
	s.ClearBusy()
	_, errOut, code := relayBaton(t, ctx, nil, evPayload(sub, "Stop", ""), "hook", "wait", "--timeout", "5s")
	if code != 2 || !strings.Contains(errOut, m2.ID) {
		t.Fatalf("wait from a sub-folder: exit %d, %q", code, errOut)
	}
	if _, _, c := relayBaton(t, ctx, nil, evPayload(sub, "SessionStart", `,"source":"startup"`), "hook", "session-start"); c != 0 {
		t.Fatalf("session-start exit %d", c)
	}
	if r, ok := s.Registration(); !ok || r.Cwd != sub {
		t.Errorf("session-start from a sub-folder: registration %+v %v at the root", r, ok)
	}
	for _, d := range []string{filepath.Join(ws, "pkg"), sub} {
		if _, err := os.Stat(filepath.Join(d, ".claude")); err == nil {
			t.Errorf("a second .claude folder was created in %s", d)
		}
	}
	// A new session whose first hook runs in a sub-folder of a git
	// repository gets its chat folder at the repository root.
	ws2 := t.TempDir()
	os.Mkdir(filepath.Join(ws2, ".git"), 0o700)
	sub2 := filepath.Join(ws2, "a", "b")
	os.MkdirAll(sub2, 0o700)
	relayBaton(t, ctx, nil, `{"session_id":"`+chatSID+`","cwd":"`+sub2+`","hook_event_name":"SessionStart","source":"startup"}`, "hook", "session-start")
	if _, err := os.Stat(filepath.Join(ws2, conversation.ChatDir, chatSID, "inbox")); err != nil {
		t.Errorf("first hook in a sub-folder: no chat folder at the repository root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub2, ".claude")); err == nil {
		t.Error("first hook in a sub-folder created .claude there")
	}
}
