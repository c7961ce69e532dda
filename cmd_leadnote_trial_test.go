package main

import (
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The lead (the most recently active running session, unless marked) moves
// when a newer session starts: send says so rather than going elsewhere
// without a word; a marked lead stays.
func TestSendSaysTheLeadMoved(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	ws, first := chatWorkspace(t)
	start := func(s *conversation.Session, at time.Time) {
		t.Helper()
		if err := s.Register(conversation.Registration{Cwd: ws, RegisteredAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordProcess(procfacts.ThisProcess()); err != nil { // it runs (as this test)
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	start(first, t0)
	send := func() (string, string) {
		t.Helper()
		code, out, errs := runCLI(t, "", "send", "--workspace", ws, "hello")
		if code != 0 {
			t.Fatalf("send: %d %q %q", code, out, errs)
		}
		return out, errs
	}
	if _, errs := send(); strings.Contains(errs, "lead is now") {
		t.Errorf("the first send noted a move: %q", errs)
	}
	if _, errs := send(); strings.Contains(errs, "lead is now") {
		t.Errorf("the same lead again noted a move: %q", errs)
	}
	// A newer session starts: it becomes the lead, and send says so, once.
	const newer = "6d0ffee0-1234-4abc-8def-0123456789ab"
	second, _ := conversation.OpenSession(ws, newer)
	if err := second.Ensure(); err != nil {
		t.Fatal(err)
	}
	start(second, t0.Add(time.Minute))
	out, errs := send()
	if !strings.Contains(out, "for session "+newer) || !strings.Contains(errs, "lead is now claude "+newer) || !strings.Contains(errs, "it was "+chatSID[:8]) || !strings.Contains(errs, "--set-lead") {
		t.Errorf("after a newer session started: %q %q", out, errs)
	}
	if _, errs := send(); strings.Contains(errs, "lead is now") {
		t.Errorf("the note repeated: %q", errs)
	}
	// Marked with --set-lead: the lead is where the user put it, no note.
	if code, _, errs := runCLI(t, "", "targets", "--workspace", ws, "--set-lead", chatSID); code != 0 {
		t.Fatalf("--set-lead: %d %q", code, errs)
	}
	if out, errs := send(); !strings.Contains(out, "for session "+chatSID) || strings.Contains(errs, "lead is now") {
		t.Errorf("marked lead: %q %q", out, errs)
	}
}
