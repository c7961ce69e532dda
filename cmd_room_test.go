package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/procfacts"
)

func roomRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return dir
}

func TestOneShotAgentCommandsNeedYesWithoutTTY(t *testing.T) {
	dir := roomRepo(t)
	for _, args := range [][]string{{"plan", "--path", dir, "do x"}, {"execute", "--path", dir}, {"handoff", "--path", dir, "--to", "codex"}} {
		code, _, errs := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errs, "pass --yes") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "handoff", "--path", dir); code != 2 || !strings.Contains(errs, "--to claude or --to codex") {
		t.Errorf("handoff without --to: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "plan", "--path", dir); code != 2 || !strings.Contains(errs, "plan needs a task") {
		t.Errorf("plan without task: %d %q", code, errs)
	}
	// --yes without a plan: exit 2 with what to do next.
	if code, _, errs := runCLI(t, "", "execute", "--path", dir, "--yes"); code != 2 || !strings.Contains(errs, "relay-baton plan <task>") {
		t.Errorf("execute --yes without plan: %d %q", code, errs)
	}
}

func TestOneShotReportsJSON(t *testing.T) {
	dir := roomRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644)
	code, out, errs := runCLI(t, "", "status", "--path", dir, "--json")
	var st struct {
		ActiveAgent  string   `json:"activeAgent"`
		ChangedFiles []string `json:"changedFiles"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ActiveAgent != "claude" || len(st.ChangedFiles) != 1 {
		t.Fatalf("status: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "budget", "--path", dir, "--json", "--diet", "caveman")
	var b struct {
		Diet  string  `json:"diet"`
		Ratio float64 `json:"ratio"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Diet != "caveman" {
		t.Fatalf("budget: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "", "budget", "--path", dir, "--diet", "keto"); code != 2 || !strings.Contains(errs, "unknown diet profile") {
		t.Fatalf("bad diet: %d %q", code, errs)
	}
	code, out, _ = runCLI(t, "", "review", "--path", dir, "--json")
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
	code, out, _ = runCLI(t, "", "doctor", "--path", dir, "--deep", "--json")
	if !strings.Contains(out, `"conversation.jsonl"`) || (code != 0 && code != 1) {
		t.Fatalf("doctor: %d %q", code, out)
	}
	if code, _, _ := runCLI(t, "", "note", "--path", dir, "tried", "x"); code != 0 {
		t.Fatalf("note: %d", code)
	}
	// The reports recorded nothing; the note is the log's only event.
	log, _ := os.ReadFile(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
	if !strings.Contains(string(log), `"text":"tried x"`) || strings.Count(string(log), "\n") != 1 {
		t.Errorf("log after the reports and a note:\n%s", log)
	}
}

// snapshot is every file, folder and symlink under root (.git included)
// with its mode and content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffSnapshots(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "created "+k)
		}
	}
	return d
}

// The read-only commands leave the repository byte-identical (no
// .ai-session, no event, no review.md, not even git's index refreshed),
// in a fresh repository and in one with a session.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	dir := roomRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	for _, args := range [][]string{{"add", "a.txt"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)
	reports := [][]string{{"status"}, {"status", "--json"}, {"budget"}, {"budget", "--json"}, {"review"}, {"review", "--json"},
		{"doctor"}, {"doctor", "--deep"}, {"doctor", "--deep", "--json"}, {"replay"}, {"targets"}, {"version"}}
	check := func(when string) {
		before := snapshot(t, dir)
		for _, args := range reports {
			code, _, errs := runCLI(t, "", append(args, "--path", dir)...)
			if args[0] == "targets" || args[0] == "version" {
				code, _, errs = runCLI(t, "", args...)
			}
			if code != 0 && !(args[0] == "doctor" && code == 1) {
				t.Errorf("%s: %v: exit %d %s", when, args, code, errs)
			}
			if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
				t.Fatalf("%s: %v wrote to the repository: %v", when, args, d)
			}
		}
	}
	t.Chdir(dir)
	check("fresh repository")
	if code, _, _ := runCLI(t, "", "note", "--path", dir, "a session exists now"); code != 0 {
		t.Fatal("note failed")
	}
	check("with .ai-session")
}

// doctor outside a git repository checks the binaries, the key variables
// and the user's hooks, and says the repository checks were skipped.
func TestDoctorOutsideRepo(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	for _, deep := range []bool{false, true} {
		args := []string{"doctor"}
		if deep {
			args = append(args, "--deep")
		}
		code, out, errs := runCLI(t, "", args...)
		if code != 0 && code != 1 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		for _, want := range []string{"relay-baton ", "git version", "skip repository", "repository checks were skipped", "claude ", "codex ", "api keys", "hooks (user)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in\n%s", args, want, out)
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && (f[1] == ".ai-session" || f[1] == "conversation.jsonl" || strings.Contains(l, "hooks (project)")) {
				t.Errorf("%v: a repository check ran outside a repository: %s", args, l)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("doctor wrote %v", ents)
	}
}

// A missing agent binary: the preview first (what would run), then one
// line saying it is not installed and how to get it.
func TestMissingAgentShowsPreviewFirst(t *testing.T) {
	dir := roomRepo(t)
	t.Setenv("PATH", t.TempDir())
	t.Setenv(agents.ClaudeBinEnv, "")
	code, out, errs := runCLI(t, "", "plan", "--yes", "--path", dir, "add a flag")
	if code != 1 || !strings.Contains(out, "preview: /plan → claude (planner)") || !strings.Contains(out, "argv:    claude -p ") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if !strings.Contains(errs, "claude is not installed") || !strings.Contains(errs, "npm install -g @anthropic-ai/claude-code") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("stderr %q", errs)
	}
}

func TestOneShotOutsideRepo(t *testing.T) {
	code, _, errs := runCLI(t, "", "status", "--path", t.TempDir())
	if code != 2 || !strings.Contains(errs, "not inside a git repository") {
		t.Fatalf("%d %q", code, errs)
	}
}

func TestChatAgentOrchestrator(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv(claudecode.NoRegistryEnv, "1") // the hooks' advice whether or not claude is on PATH
	dir := roomRepo(t)
	code, _, errs := runCLI(t, "", "chat", "--path", dir, "--agent", "orchestrator")
	if code == 0 || !strings.Contains(errs, "no chat-capable Claude Code or Codex session in "+dir+": run `relay-baton hook install` (for Codex: `relay-baton hook install --agent codex`) there, then start the agent") {
		t.Fatalf("no session: exit %d, stderr %q", code, errs)
	}
	const sid = "0b7e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"
	s, _ := conversation.OpenSession(dir, sid)
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	code, out, errs := runCLI(t, "", "chat", "--path", dir, "--agent", "orchestrator")
	if code != 0 || !strings.Contains(out, "active agent: orchestrator → Claude Code session "+sid+" (the lead)") || !strings.Contains(out, "active agent orchestrator") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
