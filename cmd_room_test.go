package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
)

func roomRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return dir
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestOneShotAgentCommandsNeedYesWithoutTTY(t *testing.T) {
	dir := roomRepo(t)
	for _, args := range [][]string{{"plan", "--path", dir, "do x"}, {"execute", "--path", dir}, {"handoff", "--path", dir, "--to", "codex"}} {
		code, _, errs := runCmd(t, args...)
		if code != 2 || !strings.Contains(errs, "pass --yes") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := runCmd(t, "handoff", "--path", dir); code != 2 || !strings.Contains(errs, "--to claude or --to codex") {
		t.Errorf("handoff without --to: %d %q", code, errs)
	}
	if code, _, errs := runCmd(t, "plan", "--path", dir); code != 2 || !strings.Contains(errs, "plan needs a task") {
		t.Errorf("plan without task: %d %q", code, errs)
	}
	// --yes without a plan: exit 2 with what to do next.
	if code, _, errs := runCmd(t, "execute", "--path", dir, "--yes"); code != 2 || !strings.Contains(errs, "relay-baton plan <task>") {
		t.Errorf("execute --yes without plan: %d %q", code, errs)
	}
}

func TestOneShotReportsJSON(t *testing.T) {
	dir := roomRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644)
	code, out, errs := runCmd(t, "status", "--path", dir, "--json")
	var st struct {
		ActiveAgent  string   `json:"activeAgent"`
		ChangedFiles []string `json:"changedFiles"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ActiveAgent != "claude" || len(st.ChangedFiles) != 1 {
		t.Fatalf("status: %d %q %q", code, out, errs)
	}
	code, out, _ = runCmd(t, "budget", "--path", dir, "--json", "--diet", "caveman")
	var b struct {
		Diet  string  `json:"diet"`
		Ratio float64 `json:"ratio"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Diet != "caveman" {
		t.Fatalf("budget: %d %q", code, out)
	}
	if code, _, errs := runCmd(t, "budget", "--path", dir, "--diet", "keto"); code != 2 || !strings.Contains(errs, "unknown diet profile") {
		t.Fatalf("bad diet: %d %q", code, errs)
	}
	code, out, _ = runCmd(t, "review", "--path", dir, "--json")
	var rv map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rv) != nil {
		t.Fatalf("review: %d %q", code, out)
	}
	if ch, _ := rv["changed"].([]any); len(ch) != 1 {
		t.Errorf("review changed: %q", out)
	}
	// Empty lists are [] (jq '.testsTouched[]' must not fail), never null.
	if tt, ok := rv["testsTouched"].([]any); !ok || len(tt) != 0 {
		t.Errorf("review testsTouched: %q", out)
	}
	code, out, _ = runCmd(t, "doctor", "--path", dir, "--deep", "--json")
	if !strings.Contains(out, `"conversation.jsonl"`) || (code != 0 && code != 1) {
		t.Fatalf("doctor: %d %q", code, out)
	}
	if code, _, _ := runCmd(t, "note", "--path", dir, "tried", "x"); code != 0 {
		t.Fatalf("note: %d", code)
	}
	log, _ := os.ReadFile(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
	for _, want := range []string{`"kind":"status"`, `"kind":"budget"`, `"kind":"review"`, `"kind":"diagnose"`, `"text":"tried x"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %s", want)
		}
	}
}

func TestOneShotOutsideRepo(t *testing.T) {
	code, _, errs := runCmd(t, "status", "--path", t.TempDir())
	if code != 2 || !strings.Contains(errs, "not inside a git repository") {
		t.Fatalf("%d %q", code, errs)
	}
}

func TestChatAgentOrchestrator(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	dir := roomRepo(t)
	code, _, errs := runCmd(t, "chat", "--path", dir, "--agent", "orchestrator")
	if code == 0 || !strings.Contains(errs, "no chat-capable Claude Code session in "+dir+": run `relay-baton hook install` there, then start Claude Code") {
		t.Fatalf("no session: exit %d, stderr %q", code, errs)
	}
	const sid = "0b7e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"
	s, _ := conversation.OpenSession(dir, sid)
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(conversation.ThisProcess()) // the session runs (as this test)
	code, out, errs := runCmd(t, "chat", "--path", dir, "--agent", "orchestrator")
	if code != 0 || !strings.Contains(out, "active agent: orchestrator → Claude Code session "+sid+" (the lead)") || !strings.Contains(out, "active agent orchestrator") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
