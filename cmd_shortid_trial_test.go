package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
)

// The eight hex digits every view shows are enough wherever a session id is
// taken: a unique prefix resolves among the workspace's sessions; an
// ambiguous one lists the candidates; none names `relay-baton targets`.
func TestShortSessionIDs(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	ws, s := chatWorkspace(t)
	transcript := filepath.Join(t.TempDir(), chatSID+".jsonl")
	line := `{"type":"assistant","sessionId":"` + chatSID + `","message":{"role":"assistant","content":[{"type":"text","text":"SHORT-ID-REPLY"}]}}` + "\n"
	if err := os.WriteFile(transcript, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{TranscriptPath: transcript, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	short := chatSID[:8]
	code, out, errs := runCLI(t, "", "send", "--workspace", ws, "--session", short, "hello")
	if code != 0 || !strings.Contains(out, "for session "+chatSID) {
		t.Fatalf("send --session %s: %d %q %q", short, code, out, errs)
	}
	code, out, errs = runCLI(t, "", "tail", "--workspace", ws, "--session", strings.ToUpper(short), "--from-start", "--no-follow")
	if code != 0 || !strings.Contains(out, "SHORT-ID-REPLY") {
		t.Fatalf("tail --session %s: %d %q %q", short, code, out, errs)
	}
	code, out, errs = runCLI(t, "", "targets", "--workspace", ws, "--set-lead", short)
	if code != 0 {
		t.Fatalf("targets --set-lead %s: %d %q %q", short, code, out, errs)
	}

	// Two sessions sharing the prefix: ambiguous, both named.
	twin := chatSID[:8] + "-9999-4999-8999-999999999999"
	s2, _ := conversation.OpenSession(ws, twin)
	if err := s2.Ensure(); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "", "send", "--workspace", ws, "--session", short, "hello")
	if code != 2 || !strings.Contains(errs, "more than one session") || !strings.Contains(errs, chatSID) || !strings.Contains(errs, twin) {
		t.Errorf("ambiguous prefix: %d %q", code, errs)
	}
	if code, _, errs = runCLI(t, "", "send", "--workspace", ws, "--session", chatSID[:13], "hello"); code != 0 {
		t.Errorf("a longer prefix, unique again: %d %q", code, errs)
	}
	// No session with the prefix: say where to look.
	code, _, errs = runCLI(t, "", "tail", "--workspace", ws, "--session", "deadbeef", "--no-follow")
	if code != 2 || !strings.Contains(errs, "matches no session") || !strings.Contains(errs, "relay-baton targets") {
		t.Errorf("unknown prefix: %d %q", code, errs)
	}
	// Too short, or not hex: still a bad id.
	for _, bad := range []string{"5c0f", "zzzzzzzz"} {
		if code, _, errs = runCLI(t, "", "wait", "--workspace", ws, "--session", bad, "--once"); code != 2 || !strings.Contains(errs, "unique prefix") {
			t.Errorf("--session %s: %d %q", bad, code, errs)
		}
	}
}
