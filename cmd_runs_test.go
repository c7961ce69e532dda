package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// committedRepo is a repository with one commit of a.txt.
func committedRepo(t *testing.T) string {
	t.Helper()
	dir := roomRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	for _, args := range [][]string{{"add", "a.txt"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// fakeCodex is a codex that edits a.txt in the folder -C names, as the
// real one does in its sandbox.
func fakeCodex(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for codex")
	}
	p := filepath.Join(t.TempDir(), "codex")
	script := `#!/bin/sh
dir=.
while [ $# -gt 0 ]; do
  case "$1" in -C) dir="$2"; shift;; esac
  shift
done
printf 'one\nTWO\nthree\n' > "$dir/a.txt"
echo '{"type":"thread.started","thread_id":"t1"}'
echo '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"edited a.txt"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}'
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// One-shot execute runs codex in a worktree of its own; runs, diff,
// apply and undo work on it outside the room.
func TestOneShotExecuteThenRunsDiffApplyUndo(t *testing.T) {
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	t.Setenv("RELAY_BATON_CODEX", fakeCodex(t))
	dir := committedRepo(t)
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte("## Goal\nshout\n"), 0o600)

	code, out, errs := runCLI(t, "", "execute", "--path", dir, "--yes")
	if code != 0 {
		t.Fatalf("execute: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "worktree: ") || !strings.Contains(out, "changed 1 file: +1 -1") || !strings.Contains(out, "/apply brings them into your tree") {
		t.Fatalf("execute printed:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("execute wrote in the user's tree: %q", b)
	}

	code, out, _ = runCLI(t, "", "runs", "--path", dir, "--json")
	var list []struct {
		ID, State, Worktree string
		Files               int
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].State != "pending" || list[0].Files != 1 {
		t.Fatalf("runs --json: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "", "runs", "--path", dir)
	if code != 0 || !strings.Contains(out, list[0].ID) || !strings.Contains(out, "pending, 1 file changed +1 -1, not applied") || !strings.Contains(out, "relay-baton apply --run "+list[0].ID) {
		t.Fatalf("runs: %s", out)
	}
	code, out, _ = runCLI(t, "", "diff", "--path", dir)
	if code != 0 || !strings.Contains(out, "+TWO") {
		t.Fatalf("diff: %d %s", code, out)
	}
	code, _, errs = runCLI(t, "", "apply", "--path", dir)
	if code != 2 || !strings.Contains(errs, "--yes") {
		t.Fatalf("apply without a terminal or --yes: %d %s", code, errs)
	}
	code, out, errs = runCLI(t, "", "apply", "--path", dir, "--yes")
	if code != 0 || !strings.Contains(out, "a.txt  write   (+1 -1, 1 hunk)") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Fatalf("after apply: %q", b)
	}
	if _, err := os.Stat(list[0].Worktree); err == nil {
		t.Fatal("the applied run's worktree is left")
	}
	code, out, errs = runCLI(t, "", "undo", "--path", dir, "--yes")
	if code != 0 || !strings.Contains(out, "took out 1 file") {
		t.Fatalf("undo: %d\n%s\n%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("after undo: %q", b)
	}
	code, out, _ = runCLI(t, "", "runs", "--path", dir, "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("runs after undo: %s", out)
	}
	if code, _, errs = runCLI(t, "", "apply", "--path", dir, "--yes"); code != 1 || !strings.Contains(errs, "no run kept") {
		t.Fatalf("apply with no run: %d %s", code, errs)
	}
}

// --in-place keeps the executor in the user's tree.
func TestOneShotExecuteInPlace(t *testing.T) {
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	t.Setenv("RELAY_BATON_CODEX", fakeCodex(t))
	dir := committedRepo(t)
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte("## Goal\nshout\n"), 0o600)
	code, out, errs := runCLI(t, "", "execute", "--path", dir, "--yes", "--in-place")
	if code != 0 || !strings.Contains(out, "in place: the executor edits your working tree directly") {
		t.Fatalf("execute --in-place: %d\n%s\n%s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Fatalf("after execute --in-place: %q", b)
	}
}

// TestMain keeps the runs' worktrees of this package's tests out of the
// user's cache folder.
func TestMain(m *testing.M) {
	if os.Getenv("RELAY_BATON_WORKTREES") == "" {
		d, err := os.MkdirTemp("", "main-worktrees-")
		if err != nil {
			panic(err)
		}
		os.Setenv("RELAY_BATON_WORKTREES", d)
		code := m.Run()
		os.RemoveAll(d)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
