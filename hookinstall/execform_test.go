package hookinstall

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/hook"
	"github.com/relay-baton/relay-baton/reports"
)

// execHandlers reads the handlers of settings as (command, args) pairs per
// event.
func execHandlers(t *testing.T, settings []byte) map[string][][]string {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string][][]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out[ev] = append(out[ev], append([]string{h.Command}, h.Args...))
			}
		}
	}
	return out
}

// Exec form: "command" is the binary's path as it is (spaces and quotes
// need no quoting: no shell reads it), "args" the words after it.
// Switching forms replaces relay-baton's entries and keeps everything
// else; uninstall removes exec-form entries; a wrapper in exec form is
// the user's own.
func TestExecFormHooks(t *testing.T) {
	bin := "/opt/relay baton/it's/relay-baton"
	o := HookOptions{Binary: bin, WaitTimeout: 2 * time.Minute, ExecForm: true}
	once, err := MergeHooks([]byte(foreignSettings), o, false)
	if err != nil {
		t.Fatal(err)
	}
	got := execHandlers(t, once)
	want := map[string][][]string{
		"Stop":             {{"~/bin/notify.sh"}, {bin, "hook", "stop"}, {bin, "hook", "wait", "--timeout", (2*time.Minute - hook.WaiterMargin(2*time.Minute)).String()}},
		"SessionStart":     {{bin, "hook", "session-start"}, {bin, "hook", "wait", "--timeout", (2*time.Minute - hook.WaiterMargin(2*time.Minute)).String()}},
		"UserPromptSubmit": {{bin, "hook", "prompt-submit"}},
		"Notification":     {{bin, "hook", "notify"}},
		"PreToolUse":       {{"guard"}},
	}
	for ev, w := range want {
		if !slices.EqualFunc(got[ev], w, slices.Equal) {
			t.Errorf("%s = %q, want %q", ev, got[ev], w)
		}
	}
	if !strings.Contains(string(once), `"args":["hook","stop"]`) {
		t.Errorf("no exec-form Stop hook written as Claude Code reads it:\n%s", once)
	}
	if twice, _ := MergeHooks(once, o, false); string(twice) != string(once) {
		t.Errorf("a second exec-form install changed the file")
	}
	if b := StopHookBinaries(once); !slices.Equal(b, []string{bin}) {
		t.Errorf("StopHookBinaries = %q", b)
	}

	// Shell form over exec form, and back: one set of entries each time.
	shell, _ := MergeHooks(once, HookOptions{Binary: bin, WaitTimeout: 2 * time.Minute}, false)
	if n := strings.Count(string(shell), " hook stop"); n != 1 || strings.Contains(string(shell), `"args"`) {
		t.Errorf("shell form over exec form: %d shell Stop hooks, args left: %s", n, shell)
	}
	back, _ := MergeHooks(shell, o, false)
	if string(back) != string(once) {
		t.Errorf("exec form over shell form is not the exec-form file:\n%s\nvs\n%s", back, once)
	}

	// Uninstall removes exec-form entries, and only them.
	un, _ := MergeHooks(once, o, true)
	if strings.Contains(string(un), "relay-baton") || !strings.Contains(string(un), "notify.sh") || !strings.Contains(string(un), `"guard"`) {
		t.Errorf("uninstall:\n%s", un)
	}

	// A wrapper in exec form, or a relative binary, is not ours: kept,
	// and reported.
	wrapped := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/env","args":["relay-baton","hook","stop"]},{"type":"command","command":"relay-baton","args":["hook","stop"]},{"type":"command","command":"/x/relay-baton","args":["hook","stop","; rm -rf ~"]}]}]}}`
	after, err := MergeHooks([]byte(wrapped), o, true)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(after, []byte(wrapped)) {
		t.Errorf("uninstall removed entries that are not exactly ours:\n%s", after)
	}
	if f := ForeignRelayBatonHooks(after); len(f) != 3 {
		t.Errorf("foreign entries: %q", f)
	}
}

// CheckHooks (doctor) finds exec-form hooks of this binary.
func TestCheckHooksExecForm(t *testing.T) {
	root := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	bin := filepath.Join(t.TempDir(), "relay-baton")
	merged, err := MergeHooks(nil, HookOptions{Binary: bin, ExecForm: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), merged, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range CheckHooks(root, bin) {
		if c.Name == "hooks (project)" && (c.Status != reports.OK || !strings.Contains(c.Detail, "chat hooks of this binary")) {
			t.Errorf("exec-form hooks of this binary: %+v", c)
		}
	}
	for _, c := range CheckHooks(root, "/elsewhere/relay-baton") {
		if c.Name == "hooks (project)" && (c.Status != reports.Warn || !strings.Contains(c.Detail, "another relay-baton binary")) {
			t.Errorf("exec-form hooks of another binary: %+v", c)
		}
	}
}

// fakeClaude writes an executable "claude" that prints version.
func fakeClaude(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The form follows the installed claude's version: exec form from
// 2.1.139, shell form before it, without a claude, or when its version
// cannot be read.
func TestClaudeExecFormByVersion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hook install refuses on native Windows; the fake claude is a shell script")
	}
	for _, c := range []struct {
		version string
		exec    bool
		why     string
	}{
		{"2.1.332 (Claude Code)", true, "exec (no shell), since "},
		{"2.1.139 (Claude Code)", true, "Claude Code 2.1.139 (2.1.139 or later)"},
		{"2.1.138 (Claude Code)", false, "is Claude Code 2.1.138 and exec form needs 2.1.139 or later"},
		{"2.0.999 (Claude Code)", false, "exec form needs 2.1.139"},
		{"3.0.0 (Claude Code)", true, "exec (no shell)"},
		{"claude, some build", false, "cannot be read"},
	} {
		env := []string{"PATH=" + fakeClaude(t, c.version)}
		got, why := ClaudeExecForm(context.Background(), env)
		if got != c.exec || !strings.Contains(why, c.why) {
			t.Errorf("%s: exec form %v (%s), want %v (%q)", c.version, got, why, c.exec, c.why)
		}
	}
	// RELAY_BATON_CLAUDE first.
	old := filepath.Join(fakeClaude(t, "2.1.100 (Claude Code)"), "claude")
	if got, _ := ClaudeExecForm(context.Background(), []string{"PATH=" + fakeClaude(t, "2.1.332 (Claude Code)"), "RELAY_BATON_CLAUDE=" + old}); got {
		t.Errorf("RELAY_BATON_CLAUDE (2.1.100) not taken before PATH")
	}
	// No claude: shell form, and the note says what to do.
	if got, why := ClaudeExecForm(context.Background(), []string{"PATH=" + t.TempDir()}); got || !strings.Contains(why, "no claude on PATH") || !strings.Contains(why, "--form exec") {
		t.Errorf("no claude: %v %s", got, why)
	}
	// A relative PATH entry (the current folder) is never searched.
	wd := fakeClaude(t, "2.1.332 (Claude Code)")
	t.Chdir(wd)
	if got, _ := ClaudeExecForm(context.Background(), []string{"PATH=.:"}); got {
		t.Errorf("a claude in the current folder was run")
	}
}

// hook install --form auto writes exec form for a new claude and says so;
// --form shell and the default ("") write shell lines.
func TestInstallForm(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hook install refuses on native Windows")
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	bin := filepath.Join(t.TempDir(), "relay-baton")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	env := []string{"PATH=" + fakeClaude(t, "2.1.332 (Claude Code)")}
	var out strings.Builder
	if _, err := Install(context.Background(), &out, Options{Workspace: ws, Binary: bin, WaitTimeout: time.Minute, Form: FormAuto, Env: env}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(ws, ".claude", "settings.json"))
	if b := StopHookBinaries(data); !slices.Equal(b, []string{bin}) || !slices.ContainsFunc(execHandlers(t, data)["Stop"], func(h []string) bool { return slices.Equal(h, []string{bin, "hook", "stop"}) }) || !strings.Contains(out.String(), "Form: exec (no shell)") {
		t.Errorf("auto with claude 2.1.332:\n%s\n%s", out.String(), data)
	}
	if !strings.Contains(out.String(), "  Stop             "+bin+" hook stop (timeout 30s)") {
		t.Errorf("the hooks are not listed as command lines:\n%s", out.String())
	}
	// --check with the same form: current.
	if cur, err := Install(context.Background(), io.Discard, Options{Workspace: ws, Binary: bin, WaitTimeout: time.Minute, Form: FormAuto, Env: env, Check: true}); err != nil || !cur {
		t.Errorf("--check after an exec-form install: current=%v err=%v", cur, err)
	}
	for _, form := range []string{FormShell, ""} {
		if _, err := Install(context.Background(), io.Discard, Options{Workspace: ws, Binary: bin, WaitTimeout: time.Minute, Form: form, Env: env}); err != nil {
			t.Fatal(err)
		}
		data, _ = os.ReadFile(filepath.Join(ws, ".claude", "settings.json"))
		if strings.Contains(string(data), `"args"`) || strings.Count(string(data), " hook stop") != 1 {
			t.Errorf("--form %q:\n%s", form, data)
		}
	}
	if _, err := Install(context.Background(), io.Discard, Options{Workspace: ws, Binary: bin, WaitTimeout: time.Minute, Form: "bash"}); err == nil || !strings.Contains(err.Error(), "--form must be auto, exec or shell") {
		t.Errorf("--form bash: %v", err)
	}
}
