package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// hostileName carries OSC, clear screen, a raw C1 CSI and a bidi override:
// what a stranger's repository can put in a file name or plan.md.
const hostileName = "evil\x1b]0;pwned\x07\x1b[2J\u009b31m\u202egnp.exe\u200b"

// assertShown fails when out holds a control character, a C1 character, a
// bidi control or a zero-width character, and when the hostile text is not
// shown visibly.
func assertShown(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || events.HiddenControl(r) {
			t.Fatalf("%s: U+%04X at %d reaches the terminal:\n%q", what, r, i, out)
		}
	}
	if !strings.Contains(out, `evil^[]0;pwned^G^[[2J\u009b31m<U+202E>gnp.exe<U+200B>`) {
		t.Fatalf("%s: the hostile text is not shown visibly:\n%q", what, out)
	}
}

// assertJSONEscaped fails when the JSON out holds a raw control, C1, bidi
// or zero-width character.
func assertJSONEscaped(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' || r == 0x7f || events.HiddenControl(r) {
			t.Fatalf("%s: raw U+%04X at %d in the JSON:\n%q", what, r, i, out)
		}
	}
	if !strings.Contains(out, `\u009b31m\u202egnp.exe\u200b`) {
		t.Fatalf("%s: the hostile text is not escaped as \\u:\n%s", what, out)
	}
}

func hostileRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644)
	git("add", "README")
	git("commit", "-qm", "init")
	os.WriteFile(filepath.Join(repo, hostileName), []byte("new\n"), 0o644)
	os.Mkdir(filepath.Join(repo, ".ai-session"), 0o700)
	os.WriteFile(filepath.Join(repo, ".ai-session", "plan.md"), []byte("# Plan\n## Steps\n1. change "+hostileName+"\n2. test it\n"), 0o600)
	return repo
}

func TestStatusAndReviewAreInert(t *testing.T) {
	repo := hostileRepo(t)
	for _, cmd := range []string{"status", "review"} {
		code, out, errOut := runCLI(t, "", cmd, "--path", repo)
		if code != 0 {
			t.Fatalf("%s: %q %d", cmd, errOut, code)
		}
		assertShown(t, cmd, out)
		code, out, errOut = runCLI(t, "", cmd, "--path", repo, "--json")
		if code != 0 {
			t.Fatalf("%s --json: %q %d", cmd, errOut, code)
		}
		assertJSONEscaped(t, cmd+" --json", out)
		if !json.Valid([]byte(out)) {
			t.Fatalf("%s --json is not JSON: %s", cmd, out)
		}
	}
}

func TestReplayFooterAndJSONAreInert(t *testing.T) {
	f := filepath.Join(t.TempDir(), "conversation.jsonl")
	line := func(role, kind string) string {
		b, _ := json.Marshal(map[string]any{"schemaVersion": 1, "id": "evt_1", "ts": "2026-05-29T10:00:00.000Z", "sessionId": "s1", "role": role, "kind": kind, "text": "text " + hostileName})
		return string(b) + "\n"
	}
	os.WriteFile(f, []byte(line("role"+hostileName, "kind"+hostileName)+line("user", "message")), 0o600)
	code, out, errOut := runCLI(t, "", "replay", "--file", f)
	if code != 0 {
		t.Fatalf("replay: %q %d", errOut, code)
	}
	assertShown(t, "replay", out)
	footer := out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n")+1:]
	if !strings.Contains(footer, "role"+`evil^[]0;pwned`) {
		t.Fatalf("footer does not name the hostile role visibly: %q", footer)
	}
	code, out, errOut = runCLI(t, "", "replay", "--file", f, "--json")
	if code != 0 {
		t.Fatalf("replay --json: %q %d", errOut, code)
	}
	assertJSONEscaped(t, "replay --json", out)
}

// replay does not follow a conversation.jsonl (or an .ai-session) that a
// repository links to a file outside it.
func TestReplayRefusesLinkedLog(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	b, _ := json.Marshal(map[string]any{"schemaVersion": 1, "id": "evt_1", "ts": "2026-05-29T10:00:00.000Z", "sessionId": "s1", "role": "user", "kind": "message", "text": "SECRET OUTSIDE"})
	os.WriteFile(outside, append(b, '\n'), 0o600)
	for _, linked := range []string{"file", "folder"} {
		repo := gitRepo(t)
		if linked == "file" {
			os.Mkdir(filepath.Join(repo, ".ai-session"), 0o700)
			os.Symlink(outside, filepath.Join(repo, ".ai-session", "conversation.jsonl"))
		} else {
			dir := filepath.Dir(outside)
			os.Rename(outside, filepath.Join(dir, "conversation.jsonl"))
			outside = filepath.Join(dir, "conversation.jsonl")
			os.Symlink(dir, filepath.Join(repo, ".ai-session"))
		}
		code, out, errOut := runCLI(t, "", "replay", "--path", repo)
		if code == 0 || strings.Contains(out, "SECRET OUTSIDE") || !strings.Contains(errOut, "symlink") {
			t.Fatalf("linked %s: exit %d, out %q, err %q; want a refusal naming the link", linked, code, out, errOut)
		}
	}
}
