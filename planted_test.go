package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A cloned repository that commits a chat folder with process.json
// {"pid":1}, a lead mark naming it and a .gitignore of "!*" does not become
// a chat target: send refuses, names the planted paths, queues nothing,
// and relay-baton's .gitignore is repaired so the inbox cannot be added.
func TestPlantedLeadIsNotATarget(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	chat := filepath.Join(ws, ".claude", "session-chat")
	sess := filepath.Join(chat, chatSID)
	for _, d := range []string{"inbox", "delivered", "outbox", "rejected", "claims"} {
		os.MkdirAll(filepath.Join(sess, d), 0o755)
		os.WriteFile(filepath.Join(sess, d, ".keep"), nil, 0o644)
	}
	os.WriteFile(filepath.Join(sess, "process.json"), []byte(`{"pid":1}`), 0o644)
	os.WriteFile(filepath.Join(chat, "lead"), []byte(chatSID+"\n"), 0o644)
	os.WriteFile(filepath.Join(chat, ".gitignore"), []byte("!*\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, ".ai-session"), 0o755)
	os.WriteFile(filepath.Join(ws, ".ai-session", ".gitignore"), []byte("!*\n"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "planted")

	code, out, errOut := runCLI(t, "", "send", "--workspace", ws, "my secret message")
	if code == 0 {
		t.Fatalf("send to a planted lead succeeded: %q %q", out, errOut)
	}
	if !strings.Contains(errOut, "tracked by git") || !strings.Contains(errOut, ".claude/session-chat/"+chatSID) {
		t.Errorf("no warning naming the planted session folder:\n%s", errOut)
	}
	ents, _ := os.ReadDir(filepath.Join(sess, "inbox"))
	for _, e := range ents {
		if e.Name() != ".keep" {
			t.Fatalf("the message was queued for the planted session: %s", e.Name())
		}
	}
	for _, gi := range []string{filepath.Join(chat, ".gitignore"), filepath.Join(ws, ".ai-session", ".gitignore")} {
		if b, _ := os.ReadFile(gi); !strings.HasSuffix(string(b), "\n*\n") {
			t.Errorf("%s not repaired: %q", gi, b)
		}
	}
	// What relay-baton writes there now is not offered to `git add -A`.
	os.WriteFile(filepath.Join(chat, "new-state.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(ws, ".ai-session", "conversation.jsonl"), []byte("{}\n"), 0o600)
	if st := git("status", "--porcelain", "--untracked-files=all"); strings.Contains(st, "new-state.json") || strings.Contains(st, "conversation.jsonl") {
		t.Errorf("git status offers relay-baton's state:\n%s", st)
	}
	code, out, errOut = runCLI(t, "", "targets", "--workspace", ws, "--all")
	if strings.Contains(out, chatSID) || !strings.Contains(errOut, "tracked by git") {
		t.Errorf("targets lists the planted session or does not warn: %d %q %q", code, out, errOut)
	}
}
