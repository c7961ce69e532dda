package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// With RELAY_BATON_TEST_AS_MAIN=1 the test binary is relay-baton itself:
// the hook tests run it as a real process, as Claude Code would.
func init() {
	if os.Getenv("RELAY_BATON_TEST_AS_MAIN") == "1" {
		main()
	}
	// Run inside a Claude Code session (or an agent run), the hooks under
	// test would decide from that session: they must see none.
	for _, k := range []string{"CLAUDE_PID", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ATTENDED", "RELAY_BATON_AGENT_RUN"} {
		os.Unsetenv(k)
	}
}

const chatSID = "5c0ffee0-1234-4abc-8def-0123456789ab"

// chatWorkspace makes a workspace with a chat-capable session.
func chatWorkspace(t testing.TB) (string, *conversation.Session) {
	t.Helper()
	ws := t.TempDir()
	s, err := conversation.OpenSession(ws, chatSID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	return ws, s
}

func payload(ws string, extra string) string {
	return `{"session_id":"` + chatSID + `","cwd":"` + ws + `","hook_event_name":"Stop"` + extra + `}`
}

// relayBaton runs the test binary as relay-baton in a process of its own,
// with stdin: its exit code, stdout and stderr (runCLI's order).
func relayBaton(t testing.TB, ctx context.Context, env []string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "RELAY_BATON_TEST_AS_MAIN=1", "CLAUDE_PROJECT_DIR="), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func TestHookStopBadInputIsSilent(t *testing.T) {
	ws, s := chatWorkspace(t)
	m, _ := s.Enqueue("x", "must stay queued")
	cases := map[string]string{
		"junk":                "this is not json {",
		"empty":               "",
		"json array":          "[1,2,3]",
		"traversal id":        `{"session_id":"../../../etc","cwd":"` + ws + `"}`,
		"uuid then traversal": `{"session_id":"` + chatSID + `/../../x","cwd":"` + ws + `"}`,
		"stop_hook_active":    payload(ws, `,"stop_hook_active":true`),
		"relative cwd":        `{"session_id":"` + chatSID + `","cwd":"relative/dir"}`,
		"no cwd":              `{"session_id":"` + chatSID + `"}`,
		"unknown session":     `{"session_id":"99999999-1234-4abc-8def-0123456789ab","cwd":"` + ws + `"}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := relayBaton(t, context.Background(), nil, in, "hook", "stop")
			if out != "" || errOut != "" || code != 0 {
				t.Errorf("stdout %q, stderr %q, exit %d; want silent exit 0", out, errOut, code)
			}
			if st, err := s.State(m.ID); err != nil || !st.Queued {
				t.Fatalf("message no longer queued: %+v %v", st, err)
			}
		})
	}
}

func TestHookStopDeliversOneMessage(t *testing.T) {
	ws, s := chatWorkspace(t)
	m1, _ := s.Enqueue("room", "first <b>question</b>")
	time.Sleep(2 * time.Millisecond)
	m2, _ := s.Enqueue("room", "second")
	s.MarkBusy()
	// CLAUDE_PROJECT_DIR wins over the payload's cwd (a sub-folder).
	code, out, errOut := relayBaton(t, context.Background(), []string{"CLAUDE_PROJECT_DIR=" + ws}, payload(filepath.Join(ws, "sub"), ""), "hook", "stop")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one line, got %q", out)
	}
	var d struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "block" {
		t.Fatalf("output %q: %v", out, err)
	}
	for _, want := range []string{m1.ID, "first <b>question</b>", "chat message from relay-baton", "not a work order", "carry on"} {
		if !strings.Contains(d.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, d.Reason)
		}
	}
	if st, _ := s.State(m1.ID); st.Delivered == nil || st.Delivered.Lane != conversation.LaneHook {
		t.Errorf("first message state %+v", st)
	}
	if st, _ := s.State(m2.ID); !st.Queued {
		t.Errorf("second message state %+v, want still queued", st)
	}
	if !s.Busy(time.Now()) {
		t.Error("a blocking Stop hook cleared the busy mark (the session continues)")
	}
	// stop_hook_active: silent, and the session goes idle.
	_, out, _ = relayBaton(t, context.Background(), nil, payload(ws, `,"stop_hook_active":true`), "hook", "stop")
	if out != "" || s.Busy(time.Now()) {
		t.Errorf("stop_hook_active: output %q, busy %v", out, s.Busy(time.Now()))
	}
}

func TestHookSessionStartAndPromptSubmit(t *testing.T) {
	ws := t.TempDir()
	tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
	ev := func(name string) string {
		return `{"session_id":"` + chatSID + `","cwd":"` + ws + `","transcript_path":"` + tr + `","source":"startup","hook_event_name":"` + name + `"}`
	}
	in, prompt, stop := ev("SessionStart"), ev("UserPromptSubmit"), ev("Stop")
	// In stream-json mode the first prompt's UserPromptSubmit can come
	// before SessionStart's hook: the busy mark must
	// survive it.
	code, out, errOut := relayBaton(t, context.Background(), nil, prompt, "hook", "prompt-submit")
	if out != "" || errOut != "" || code != 0 {
		t.Fatalf("prompt-submit first: %q %q %d", out, errOut, code)
	}
	code, out, errOut = relayBaton(t, context.Background(), nil, in, "hook", "session-start")
	if out != "" || errOut != "" || code != 0 {
		t.Fatalf("session-start: %q %q %d", out, errOut, code)
	}
	s, _ := conversation.OpenSession(ws, chatSID)
	r, ok := s.Registration()
	if !ok || r.TranscriptPath != tr || r.Cwd != ws || !s.ChatCapable() {
		t.Fatalf("registration %+v %v, chat-capable %v", r, ok, s.ChatCapable())
	}
	if !s.Busy(time.Now()) {
		t.Fatal("session-start cleared a fresh busy mark")
	}
	relayBaton(t, context.Background(), nil, stop, "hook", "stop")
	if s.Busy(time.Now()) {
		t.Fatal("busy after an empty-inbox Stop")
	}
	code, out, errOut = relayBaton(t, context.Background(), nil, prompt, "hook", "prompt-submit")
	if out != "" || errOut != "" || code != 0 || !s.Busy(time.Now()) {
		t.Fatalf("prompt-submit: %q %q %d busy=%v", out, errOut, code, s.Busy(time.Now()))
	}
	relayBaton(t, context.Background(), nil, stop, "hook", "stop")
	if s.Busy(time.Now()) {
		t.Error("an empty-inbox Stop hook did not clear the busy mark")
	}
}

func TestHookWaitProcess(t *testing.T) {
	ws, s := chatWorkspace(t)
	// A hang guard: a waiter that waits where it should leave is killed
	// here and fails on its exit code.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	type result struct {
		out, err string
		code     int
	}
	first := make(chan result, 1)
	go func() {
		c, o, e := relayBaton(t, ctx, nil, payload(ws, ""), "hook", "wait")
		first <- result{o, e, c}
	}()
	// Wait until the first waiter holds the lock.
	for deadline := time.Now().Add(2 * time.Minute); !s.Waiting(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("waiter never took its lock")
		}
	}
	// At most one waiter: a second one leaves at once, silently (one that
	// waited would wait its default hours and be killed by ctx).
	c, o, e := relayBaton(t, ctx, nil, payload(ws, ""), "hook", "wait")
	if o != "" || e != "" || c != 0 {
		t.Errorf("second waiter: %q %q exit %d", o, e, c)
	}
	m, _ := s.Enqueue("room", "are you there?")
	sent := time.Now()
	select {
	case r := <-first:
		if r.code != 2 || !strings.Contains(r.err, "are you there?") || !strings.Contains(r.err, m.ID) || r.out != "" {
			t.Fatalf("waiter: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
		}
		t.Logf("enqueue -> waiter exit 2: %v", time.Since(sent))
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("waiter did not deliver")
	}
	if st, _ := s.State(m.ID); st.Delivered == nil || st.Delivered.Lane != conversation.LaneRewake {
		t.Errorf("state %+v", st)
	}
	// Busy session: the waiter times out with exit 0 and strands nothing.
	s.MarkBusy()
	m2, _ := s.Enqueue("room", "later")
	c, o, e = relayBaton(t, ctx, nil, payload(ws, ""), "hook", "wait", "--timeout", "300ms")
	if o != "" || e != "" || c != 0 {
		t.Errorf("timed-out waiter: %q %q exit %d", o, e, c)
	}
	if st, _ := s.State(m2.ID); !st.Queued {
		t.Errorf("timed-out waiter stranded the message: %+v", st)
	}
}

func TestWaitMonitorOnce(t *testing.T) {
	ws, s := chatWorkspace(t)
	m, _ := s.Enqueue("room", "monitor me")
	code, out, errOut := relayBaton(t, context.Background(), nil, "", "wait", "--session", chatSID, "--once", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "monitor me") || !strings.Contains(out, m.ID) || errOut != "" {
		t.Fatalf("wait --once: %q %q %d", out, errOut, code)
	}
	if st, _ := s.State(m.ID); st.Delivered == nil || st.Delivered.Lane != conversation.LaneMonitor {
		t.Errorf("state %+v", st)
	}
	code, _, errOut = relayBaton(t, context.Background(), nil, "", "wait", "--session", "../x", "--workspace", ws)
	if code != 2 || !strings.Contains(errOut, "UUID") {
		t.Errorf("bad id: %q %d", errOut, code)
	}
}

func TestSendTargetsTailInProcess(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws, s := chatWorkspace(t)
	tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
	os.WriteFile(tr, []byte(`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","description":"List files"}},{"type":"text","text":"done here"}],"stop_reason":"end_turn"}}`+"\n{\"type\":\"unknown\"}\n"), 0o600)
	s.Register(conversation.Registration{TranscriptPath: tr, Cwd: ws})
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)

	code, out, errOut := runCLI(t, "", "send", "--lead", "--workspace", ws, "hello")
	if code != 0 || !strings.Contains(out, "queued ") || !strings.Contains(out, chatSID) {
		t.Fatalf("send: %q %q %d", out, errOut, code)
	}
	code, out, _ = runCLI(t, "from stdin\n", "send", "--session", chatSID, "--workspace", ws, "-")
	if code != 0 || !strings.Contains(out, "(2 in the inbox)") {
		t.Fatalf("send -: %q %d", out, code)
	}
	code, _, errOut = runCLI(t, strings.Repeat("x", 70<<10), "send", "--session", chatSID, "--workspace", ws, "-")
	if code != 1 || !strings.Contains(errOut, "64 KB") {
		t.Errorf("oversize: %q %d", errOut, code)
	}
	code, _, errOut = runCLI(t, " \n", "send", "--session", chatSID, "--workspace", ws, "-")
	if code != 2 || !strings.Contains(errOut, "empty") || !strings.Contains(errOut, "Try: ") {
		t.Errorf("empty message: %q %d", errOut, code)
	}
	code, _, errOut = runCLI(t, "", "send", "--session", "../../etc", "--workspace", ws, "x")
	if code != 2 {
		t.Errorf("traversal: %q %d", errOut, code)
	}
	code, out, _ = runCLI(t, "", "targets", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "* "+chatSID) || !strings.Contains(out, "yes") {
		t.Errorf("targets: %q", out)
	}
	code, out, _ = runCLI(t, "", "targets", "--json", "--workspace", ws)
	var ts []conversation.Target
	if code != 0 || json.Unmarshal([]byte(out), &ts) != nil || len(ts) != 1 || ts[0].Depth != 2 || !ts[0].Lead || ts[0].TranscriptPath != tr {
		t.Errorf("targets --json: %s", out)
	}
	if code, _, errOut := runCLI(t, "", "targets", "--set-lead", "../x", "--workspace", ws); code != 2 || !strings.Contains(errOut, "UUID") {
		t.Errorf("--set-lead traversal: %q %d", errOut, code)
	}
	other := "0ea7beef-1234-4abc-8def-0123456789ab"
	code, out, errOut = runCLI(t, "", "targets", "--set-lead", other, "--workspace", ws)
	if !strings.Contains(errOut, "session "+other+" is not running") {
		t.Errorf("--set-lead of an unknown session says nothing: %q", errOut)
	}
	if code != 0 || !strings.Contains(out, "* "+chatSID) {
		t.Errorf("lead marked on a session that does not exist: falls back to the active one: %q", out)
	}
	os.MkdirAll(filepath.Join(ws, workspace.ChatDir, other, "inbox"), 0o700)
	_, out, _ = runCLI(t, "", "targets", "--workspace", ws)
	if !strings.Contains(out, "* "+chatSID) || strings.Contains(out, other) {
		t.Errorf("a marked lead with no process known to run is neither listed nor the lead: %q", out)
	}
	if os2, err := conversation.OpenSession(ws, other); err == nil {
		os2.RecordProcess(procfacts.ThisProcess())
	}
	_, out, _ = runCLI(t, "", "targets", "--workspace", ws)
	if !strings.Contains(out, "* "+other) || strings.Contains(out, "* "+chatSID) {
		t.Errorf("marked lead not shown: %q", out)
	}
	runCLI(t, "", "targets", "--set-lead", "none", "--workspace", ws)
	code, out, _ = runCLI(t, "", "tail", "--session", chatSID, "--workspace", ws, "--from-start", "--no-follow")
	if code != 0 || out != "[orchestrator] ⚙ Bash: List files\n[orchestrator] done here\n[orchestrator] ✓ end of turn\n" {
		t.Errorf("tail: %q", out)
	}
	_, out, _ = runCLI(t, "", "tail", "--session", chatSID, "--workspace", ws, "--from-start", "--no-follow", "--json")
	if strings.Count(out, "\n") != 3 || !strings.Contains(out, `"kind":"tool"`) {
		t.Errorf("tail --json: %q", out)
	}
}

func TestHookInstallCommand(t *testing.T) {
	// Shell form, whatever claude this machine has (--form auto: see
	// hookinstall's TestInstallForm and the room's end-to-end tests).
	ws := t.TempDir()
	settings := filepath.Join(ws, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}]},"model":"x"}`), 0o644)
	code, _, _ := runCLI(t, "", "hook", "install", "--form", "shell", "--check", "--workspace", ws)
	if code != 1 {
		t.Errorf("--check before install: exit %d, want 1", code)
	}
	code, out, errOut := runCLI(t, "", "hook", "install", "--form", "shell", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Installed") || !strings.Contains(out, "Adoption rule") || !strings.Contains(out, "wait --session") {
		t.Fatalf("install: %q %q %d", out, errOut, code)
	}
	exe, _ := os.Executable()
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), `"mine"`) || !strings.Contains(string(b), `"model":"x"`) || !strings.Contains(string(b), exe+" hook stop") || !strings.Contains(string(b), `"asyncRewake":true`) {
		t.Errorf("settings after install:\n%s", b)
	}
	code, out, _ = runCLI(t, "", "hook", "install", "--form", "shell", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "already installed") {
		t.Errorf("second install: %q", out)
	}
	if code, _, _ = runCLI(t, "", "hook", "install", "--form", "shell", "--check", "--workspace", ws); code != 0 {
		t.Errorf("--check after install: exit %d", code)
	}
	code, out, _ = runCLI(t, "", "hook", "install", "--uninstall", "--workspace", ws)
	b, _ = os.ReadFile(settings)
	if code != 0 || strings.Contains(string(b), "relay-baton") || !strings.Contains(string(b), `"mine"`) {
		t.Errorf("uninstall: %q\n%s", out, b)
	}
	if code, _, errOut := runCLI(t, "", "hook", "install", "--scope", "everywhere", "--workspace", ws); code != 2 || !strings.Contains(errOut, "scope") {
		t.Errorf("bad scope: %q %d", errOut, code)
	}
}

func TestOrchestratorHelp(t *testing.T) {
	for _, args := range [][]string{{"send", "--help"}, {"targets", "--help"}, {"tail", "--help"}, {"wait", "--help"}, {"hook", "--help"}, {"hook", "stop", "--help"}, {"hook", "wait", "--help"}, {"hook", "install", "--help"}, {"hook", "session-start", "--help"}, {"hook", "prompt-submit", "--help"}} {
		code, out, errOut := runCLI(t, "", args...)
		// The help must be the command's own, not its parent's.
		want := "Usage: relay-baton " + strings.Join(args[:len(args)-1], " ")
		rest, own := strings.CutPrefix(out, want)
		own = own && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\n"))
		if code != 0 || !own || errOut != "" {
			t.Errorf("%v: exit %d, out %q, err %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "hook", "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown hook") {
		t.Errorf("unknown hook: %q %d", errOut, code)
	}
}

// The Stop hook's empty-inbox path, in process (what it costs besides
// process start-up).
func BenchmarkHookStopEmptyInProcess(b *testing.B) {
	ws, _ := chatWorkspace(b)
	in := payload(ws, "")
	for b.Loop() {
		if code, _, _ := runCLI(b, in, "hook", "stop"); code != 0 {
			b.Fatal(code)
		}
	}
}

// The same as a process, as Claude Code runs it at every turn end (this
// is the test binary, a little larger than relay-baton).
func BenchmarkHookStopEmptyProcess(b *testing.B) {
	ws, _ := chatWorkspace(b)
	in := payload(ws, "")
	for b.Loop() {
		if code, out, _ := relayBaton(b, context.Background(), nil, in, "hook", "stop"); code != 0 || out != "" {
			b.Fatal(code, out)
		}
	}
}

// `targets` reads Claude Code's registry under the command's context: a
// Ctrl-C (main's signal context) ends a `claude agents --json` that hangs,
// and the command with it, without printing a list the registry is
// missing from.
func TestTargetsEndsWithContext(t *testing.T) {
	ws, _ := chatWorkspace(t)
	r := cancelledWhileRegistryHangs(t, "targets", "--workspace", ws)
	if r.code != 1 || !strings.Contains(r.errOut, "context canceled") || r.out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, nothing listed, the cancellation said", r.code, r.out, r.errOut)
	}
}

// `send --lead` (and a session prefix) look for the session in Claude
// Code's registry under the command's context: Ctrl-C ends the look, and
// nothing is sent.
func TestSendPickEndsWithContext(t *testing.T) {
	ws, s := chatWorkspace(t)
	for _, args := range [][]string{{"--lead"}, {"--session", chatSID[:8]}} {
		r := cancelledWhileRegistryHangs(t, append(append([]string{"send", "--workspace", ws}, args...), "hello")...)
		if r.code != 1 || !strings.Contains(r.errOut, "context canceled") || r.out != "" {
			t.Fatalf("send %v: exit %d, stdout %q, stderr %q; want exit 1, nothing queued, the cancellation said", args, r.code, r.out, r.errOut)
		}
		if q, _ := s.Queue(); q.Depth != 0 {
			t.Fatalf("send %v: %d queued after Ctrl-C", args, q.Depth)
		}
	}
}

type cliResult struct {
	code        int
	out, errOut string
}

// cancelledWhileRegistryHangs runs relay-baton args in process with a
// `claude` whose `agents --json` hangs, and cancels the command's context
// (what Ctrl-C does) once claude has started.
func cancelledWhileRegistryHangs(t *testing.T, args ...string) cliResult {
	t.Helper()
	bin, started := testkit.HangingExe(t, "claude")
	t.Setenv(agents.ClaudeBinEnv, bin)
	t.Setenv(claudecode.NoRegistryEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	claudecode.ForgetRegistry()
	t.Cleanup(claudecode.ForgetRegistry)
	return testkit.Cancelled(t, "relay-baton "+strings.Join(args, " "), started, func(ctx context.Context) cliResult {
		code, out, errOut := runCLIOn(t, ctx, "", false, args...)
		return cliResult{code, out, errOut}
	})
}
