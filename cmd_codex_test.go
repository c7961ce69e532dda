package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/hookinstall"
)

const codexThread = "01a2333a-f018-71f2-a399-eccb85793c31"

// codexPayload is a Codex 0.169.0 hook payload (as measured) for event.
func codexPayload(cwd, event, extra string) string {
	return `{"session_id":"` + codexThread + `","turn_id":"01a2333a-f0a0-7000-8000-000000000001","transcript_path":"/h/sessions/2026/12/01/rollout-2026-12-01T20-10-30-` + codexThread + `.jsonl","cwd":"` + cwd + `","hook_event_name":"` + event + `","model":"gpt-5.5","permission_mode":"bypassPermissions"` + extra + `}`
}

// The hooks read Codex's payloads as they read Claude Code's: a codex run
// sets no CLAUDE_* variable (the hook runs in manual mode), the workspace
// comes from the cwd.
func TestHooksWithCodexPayloads(t *testing.T) {
	ws := agenttest.GitRepo(t, nil)
	sub := filepath.Join(ws, "pkg")
	os.MkdirAll(sub, 0o755)
	env := []string{"CLAUDE_PID=", "CLAUDECODE=", "CLAUDE_CODE_ENTRYPOINT=", "CLAUDE_CODE_SESSION_ATTENDED="}
	ctx := context.Background()
	code, _, errOut := relayBaton(t, ctx, env, codexPayload(sub, "SessionStart", `,"source":"startup"`), "hook", "session-start")
	if code != 0 || errOut != "" {
		t.Fatalf("session-start: exit %d %q", code, errOut)
	}
	s, _ := conversation.OpenSession(ws, codexThread)
	reg, ok := s.Registration()
	if !ok || !strings.HasSuffix(reg.TranscriptPath, codexThread+".jsonl") || reg.Cwd != sub || !s.ChatCapable() {
		t.Fatalf("registration at the git root: %+v %v", reg, ok)
	}
	relayBaton(t, ctx, env, codexPayload(sub, "UserPromptSubmit", `,"prompt":"go"`), "hook", "prompt-submit")
	if !s.Busy(time.Now()) {
		t.Fatal("prompt-submit did not mark the thread busy")
	}
	m, _ := s.Enqueue("room", "are you there?")
	code, out, errOut := relayBaton(t, ctx, env, codexPayload(sub, "Stop", `,"stop_hook_active":false,"last_assistant_message":"done"`), "hook", "stop")
	var d struct{ Decision, Reason string }
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &d) != nil || d.Decision != "block" || !strings.Contains(d.Reason, "[relay-baton chat message "+m.ID) {
		t.Fatalf("stop: exit %d, %q, %q", code, out, errOut)
	}
	if st, _ := s.State(m.ID); st.Delivered == nil || st.Delivered.Lane != conversation.LaneHook {
		t.Fatalf("state %+v", st)
	}
	_, out, _ = relayBaton(t, ctx, env, codexPayload(sub, "Stop", `,"stop_hook_active":true`), "hook", "stop")
	if out != "" || s.Busy(time.Now()) {
		t.Fatalf("stop_hook_active: %q, busy %v", out, s.Busy(time.Now()))
	}
}

// install --agent codex, --check and --uninstall against the real codex
// (its app-server reports and records the trust).
func TestHookInstallCodex(t *testing.T) {
	codex := agenttest.CodexBin(t)
	o := agenttest.NewOpenAI(t)
	env := agenttest.CodexEnv(t, o, codex)
	home, _ := agenttest.EnvValue(env, "CODEX_HOME")
	ws := t.TempDir()
	hooks := filepath.Join(home, "hooks.json")
	os.WriteFile(hooks, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/true","timeout":5}]}]}}`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rb := func(args ...string) (string, int) {
		code, out, errOut := relayBaton(t, ctx, env, "", append(args, "--workspace", ws)...)
		return out + errOut, code
	}
	if out, code := rb("hook", "install", "--agent", "codex", "--check"); code != 1 || !strings.Contains(out, "missing or out of date") {
		t.Fatalf("check before install: %d %s", code, out)
	}
	// The entries written by hand (untrusted): --check asks codex and fails.
	exe, _ := os.Executable()
	before, _ := os.ReadFile(hooks)
	merged, err := hookinstall.MergeHooks(before, hookinstall.HookOptions{Binary: exe, Agent: conversation.AgentCodex}, false)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(hooks, merged, 0o644)
	if out, code := rb("hook", "install", "--agent", "codex", "--check"); code != 1 || !strings.Contains(out, "untrusted") || !strings.Contains(out, "not trusted by Codex") {
		t.Fatalf("check of untrusted hooks: %d %s", code, out)
	}
	out, code := rb("hook", "install", "--agent", "codex")
	if code != 0 || !strings.Contains(out, "Trusted 3 hook(s)") {
		t.Fatalf("install: %d %s", code, out)
	}
	toml, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	if strings.Count(string(toml), "trusted_hash = \"sha256:") != 3 || !strings.Contains(string(toml), `[hooks.state."`+hooks+`:stop:1:0"]`) || !strings.Contains(string(toml), "exclude_slash_tmp = true") {
		t.Fatalf("config.toml after install:\n%s", toml)
	}
	if out, code := rb("hook", "install", "--agent", "codex", "--check"); code != 0 || !strings.Contains(out, "current and trusted") {
		t.Fatalf("check after install: %d %s", code, out)
	}
	// The foreign hook is kept, and was not trusted by relay-baton.
	if strings.Contains(string(toml), hooks+":stop:0:0") {
		t.Errorf("relay-baton trusted a hook that is not its own:\n%s", toml)
	}
	if out, code := rb("hook", "install", "--agent", "codex"); code != 0 || !strings.Contains(out, "already installed") || strings.Contains(out, "Trusted ") {
		t.Fatalf("second install: %d %s", code, out)
	}
	if out, code := rb("hook", "install", "--agent", "codex", "--uninstall"); code != 0 || !strings.Contains(out, "Removed") {
		t.Fatalf("uninstall: %d %s", code, out)
	}
	b, _ := os.ReadFile(hooks)
	if strings.Contains(string(b), "relay-baton") || !strings.Contains(string(b), "/usr/bin/true") {
		t.Fatalf("hooks.json after uninstall:\n%s", b)
	}
	if out, code := rb("hook", "install", "--agent", "codex", "--scope", "local"); code != 2 || !strings.Contains(out, "user or project") {
		t.Fatalf("bad scope: %d %s", code, out)
	}
}

// tail of a Codex rollout: the rollout parser, and no control bytes of the
// session's text reach the terminal.
func TestTailCodexRollout(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "12", "01")
	os.MkdirAll(dir, 0o755)
	b, err := os.ReadFile("transcript/testdata/codex/rollout-0.169.0-exec-hook-delivery.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	evil := `{"timestamp":"2026-12-01T20:10:40.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"EVIL\u001b]0;owned\u0007\u001b[2J done"}]}}` + "\n"
	p := filepath.Join(dir, "rollout-2026-12-01T20-10-30-"+codexThread+".jsonl")
	os.WriteFile(p, append(b, evil...), 0o600)
	t.Setenv("CODEX_HOME", home)
	code, out, errOut := runCLI(t, "", "tail", "--session", codexThread, "--from-start", "--no-follow", "--workspace", ws)
	if code != 0 {
		t.Fatalf("tail: %d %s", code, errOut)
	}
	for _, want := range []string{"⚙ command_execution: sleep 6; echo slept", "→ chat message delivered via hook", "BUSY-ANSWER: yes, here.", "✓ end of turn", "EVIL^[]0;owned^G^[[2J done"} {
		if !strings.Contains(out, want) {
			t.Errorf("tail lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control bytes reached the output: %q", out)
	}
}
