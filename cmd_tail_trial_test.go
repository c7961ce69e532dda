package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/transcript"
)

// tail --no-follow without --from-start shows the session's last turns
// (transcript.RecentTurns), not nothing; a delivered chat message shows
// its text.
func TestTailNoFollowShowsRecentTurns(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	const sid = "3df79187-3f1d-4101-9b02-7619b688117c" // the recording's session
	b, err := os.ReadFile("transcript/testdata/claude-2.1.328-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The recording twice: six turns, three per copy.
	ws := t.TempDir()
	tpath := filepath.Join(t.TempDir(), sid+".jsonl")
	if err := os.WriteFile(tpath, append(append([]byte{}, b...), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := conversation.OpenSession(ws, sid)
	if err := s.Register(conversation.Registration{TranscriptPath: tpath, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	code, all, errs := runCLI(t, "", "tail", "--workspace", ws, "--session", sid, "--from-start", "--no-follow", "--color", "never")
	if code != 0 || strings.Count(all, "please be slow") != 2 {
		t.Fatalf("--from-start --no-follow: %d %q %q", code, all, errs)
	}
	code, recent, errs := runCLI(t, "", "tail", "--workspace", ws, "--session", sid, "--no-follow", "--color", "never")
	if code != 0 || recent == "" {
		t.Fatalf("--no-follow alone: exit %d, %q %q", code, recent, errs)
	}
	// The last three turns: exactly the second copy.
	if second := all[strings.LastIndex(all, "[you] please be slow"):]; recent != second {
		t.Errorf("--no-follow alone printed\n%s\nwant the last %d turns\n%s", recent, transcript.RecentTurns, second)
	}
	for _, want := range []string{"→ chat message delivered via hook: message sent while busy", "→ chat message delivered via rewake: message sent while idle"} {
		if !strings.Contains(recent, want) {
			t.Errorf("no %q in\n%s", want, recent)
		}
	}
}

// tail names the lane the chat folder recorded: a message steered into a
// running Codex turn shows in the rollout as a user turn, as one `codex
// queue` delivered does, and tail says "via steer" for it, as the room
// and the log do.
func TestTailSaysViaSteer(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	const sid = "01a2333b-88b5-7f30-ab54-d2401a5fb8a1" // the recording's thread
	b, err := os.ReadFile("transcript/testdata/codex/rollout-0.169.0-tui-queue-delivery.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	s, _ := conversation.OpenSession(ws, sid)
	rollout := filepath.Join(t.TempDir(), "rollout-2026-12-01T20-11-09-"+sid+".jsonl")
	if err := s.Register(conversation.Registration{TranscriptPath: rollout, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	tail := func() string {
		t.Helper()
		code, out, errs := runCLI(t, "", "tail", "--workspace", ws, "--session", sid, "--from-start", "--no-follow", "--color", "never")
		if code != 0 {
			t.Fatalf("tail: exit %d %q", code, errs)
		}
		return out
	}
	// The recorded message, queued and claimed by the steer lane.
	m, err := s.Enqueue("room", "what are you doing?")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.ClaimWith(conversation.LaneSteer, conversation.ClaimOptions{Handover: true}); err != nil || !res.OK || res.Message.ID != m.ID {
		t.Fatalf("claim: %+v %v", res, err)
	}
	if err := os.WriteFile(rollout, []byte(strings.ReplaceAll(string(b), "452048be", m.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := tail(); !strings.Contains(out, "→ chat message delivered via steer") || strings.Contains(out, "via queue") {
		t.Errorf("a steered message:\n%s", out)
	}
	// A message the folder knows nothing of keeps the rollout's word.
	if err := os.WriteFile(rollout, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := tail(); !strings.Contains(out, "→ chat message delivered via queue") {
		t.Errorf("an unknown message:\n%s", out)
	}
}
