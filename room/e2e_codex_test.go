//go:build unix

package room

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// Acceptance of chatting with running Codex sessions, with the real codex
// CLI against the mock Responses API: `relay-baton hook install --agent
// codex` (hooks.json plus the trust codex app-server reports), a `codex
// exec` session busy with a shell command that receives a message at its
// turn boundary through the Stop hook (`send --follow`, `tail`), and an
// idle interactive Codex (the TUI in tmux) that receives one through
// `codex queue` from the room.

func TestE2ECodexChat(t *testing.T) {
	const (
		busyQ = "BUSY-QUESTION-16: are the tests green?"
		busyA = "CODEX-HOOK-ANSWER: yes, all green."
		idleQ = "IDLE-QUESTION-16: what are you doing?"
		idleA = "CODEX-QUEUE-ANSWER: nothing, I am idle."
	)
	codex := agenttest.CodexBin(t)
	tmux := agenttest.TmuxBin(t)
	o := agenttest.NewOpenAI(t)
	o.When("RUN_SLEEP", agenttest.Reply(agenttest.Exec("sleep 8; echo slept")))
	o.When("Wall time", agenttest.Reply(agenttest.Text("The slow command finished."))) // any exec_command output (codex yields a command still running after about 10 s)
	o.When("BUSY-QUESTION-16", agenttest.Reply(agenttest.Thinking("the user asks about the tests"), agenttest.Text(busyA)))
	o.When("IDLE-QUESTION-16", agenttest.Reply(agenttest.Text(idleA)))
	o.When("FIRST-PROMPT", agenttest.Reply(agenttest.Text("READY-16")))
	dir, codexHome, baseEnv := codexWorkspace(t, o, codex)
	bin, _ := binaries(t)
	rb := func(timeout time.Duration, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = dir, baseEnv
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("relay-baton %v: %v", args, err)
		}
		return string(out), code
	}
	targets := func() []conversation.Target {
		t.Helper()
		out, code := rb(20*time.Second, "targets", "--json")
		var ts []conversation.Target
		if code != 0 || json.Unmarshal([]byte(out), &ts) != nil {
			t.Fatalf("targets --json (exit %d):\n%s", code, out)
		}
		return ts
	}

	// 1. Install: hooks.json, and the trust Codex reports for them.
	out, code := rb(90*time.Second, "hook", "install", "--agent", "codex")
	if code != 0 || !strings.Contains(out, "Installed relay-baton's chat hooks for Codex in "+filepath.Join(codexHome, "hooks.json")) || !strings.Contains(out, "Trusted 3 hook(s)") {
		t.Fatalf("hook install --agent codex (exit %d):\n%s", code, out)
	}
	for _, ev := range []string{"stop", "session_start", "user_prompt_submit"} {
		if !strings.Contains(out, "trusted   ") || !strings.Contains(out, filepath.Join(codexHome, "hooks.json")+":"+ev+":0:0") {
			t.Fatalf("install does not report %s as trusted:\n%s", ev, out)
		}
	}
	if out, code := rb(90*time.Second, "hook", "install", "--agent", "codex", "--check"); code != 0 || !strings.Contains(out, "installed, current and trusted") {
		t.Fatalf("hook install --agent codex --check (exit %d):\n%s", code, out)
	}

	// 2. The interactive TUI in tmux, idle after a first prompt.
	_, screen := startCodexTUI(t, tmux, codex, dir, baseEnv, "READY-16")
	var tuiID string
	eventually(t, 30*time.Second, "the TUI thread, loaded and idle, in targets", func() bool {
		for _, tg := range targets() {
			if tg.Agent == conversation.AgentCodex && tg.Loaded && !tg.Busy && tg.ChatCapable {
				tuiID = tg.SessionID
				return true
			}
		}
		return false
	})

	// 3. A codex exec session, busy with an 8 s shell command.
	var execOut, execErr bytes.Buffer
	ex := exec.Command(codex, "exec", "--json", "--skip-git-repo-check", "-C", dir, "--sandbox", "workspace-write", "RUN_SLEEP: run the slow command")
	ex.Dir, ex.Env = dir, baseEnv
	ex.Stdout, ex.Stderr = &execOut, &execErr
	ex.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ex.Start(); err != nil {
		t.Fatal(err)
	}
	execDone := make(chan struct{})
	go func() { ex.Wait(); close(execDone) }()
	t.Cleanup(func() {
		syscall.Kill(-ex.Process.Pid, syscall.SIGKILL)
		<-execDone
	})
	var execID string
	eventually(t, 30*time.Second, "the codex exec thread, busy, in targets", func() bool {
		for _, tg := range targets() {
			if tg.Agent == conversation.AgentCodex && tg.SessionID != tuiID && tg.Busy && tg.ChatCapable {
				execID = tg.SessionID
				return true
			}
		}
		return false
	})
	// 4. targets --json lists both Codex sessions, running: one busy, one idle.
	var sawExec, sawTUI bool
	for _, tg := range targets() {
		switch tg.SessionID {
		case execID:
			sawExec = tg.Agent == conversation.AgentCodex && tg.Loaded && tg.Busy && tg.State == procfacts.Live && strings.Contains(tg.TranscriptPath, filepath.Join(codexHome, "sessions")) && tg.Cwd == dir
		case tuiID:
			sawTUI = tg.Agent == conversation.AgentCodex && tg.Loaded && tg.Waiting && !tg.Busy && tg.State == procfacts.Live && strings.HasSuffix(tg.TranscriptPath, tuiID+".jsonl")
		}
	}
	if !sawExec || !sawTUI {
		out, _ := rb(20*time.Second, "targets", "--json")
		t.Fatalf("targets --json does not list both Codex sessions (exec %v, TUI %v):\n%s", sawExec, sawTUI, out)
	}

	// 5. A message for the busy exec session: the Stop hook delivers it.
	out, code = rb(60*time.Second, "send", "--session", execID, "--follow", busyQ)
	t.Logf("send --follow:\n%s", out)
	for _, want := range []string{"queued ", "delivered via hook at ", "… thinking", busyA, "✓ end of turn"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("send --follow (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
	select {
	case <-execDone:
	case <-time.After(30 * time.Second):
		t.Fatal("codex exec did not end after the chat turn")
	}
	if !strings.Contains(execOut.String(), `"text":"`+busyA+`"`) || !strings.Contains(execOut.String(), `"type":"turn.completed"`) {
		t.Fatalf("codex exec output:\n%s\n%s", execOut.String(), execErr.String())
	}
	// The answer came in the same turn, after the slow command: the Stop
	// hook blocked the turn's end with the message.
	if i, j := strings.Index(execOut.String(), "The slow command finished."), strings.Index(execOut.String(), busyA); i < 0 || j < i {
		t.Fatalf("the answer is not after the first turn's end:\n%s", execOut.String())
	}
	s, err := conversation.OpenSession(dir, execID)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := filepath.Glob(filepath.Join(s.DeliveredDir(), "*.json"))
	if len(ms) != 1 {
		t.Fatalf("delivered: %v", ms)
	}
	id := strings.TrimSuffix(filepath.Base(ms[0]), ".json")
	if st, err := s.State(id); err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneHook {
		t.Fatalf("delivered/%s.json: %+v %v", id, st, err)
	}
	out, _ = rb(20*time.Second, "tail", "--session", execID, "--from-start", "--no-follow")
	for _, want := range []string{"RUN_SLEEP: run the slow command", "⚙ command_execution: sleep 8; echo slept", "→ chat message delivered via hook", busyA, "✓ end of turn"} {
		if !strings.Contains(out, want) {
			t.Fatalf("tail --session %s lacks %q:\n%s", execID, want, out)
		}
	}

	// Ended: listed with --all only.
	out, _ = rb(20*time.Second, "targets", "--all", "--json")
	if !strings.Contains(out, execID) || !strings.Contains(out, `"state": "ended"`) {
		t.Fatalf("targets --all --json after the exec ended:\n%s", out)
	}

	// 6. The room sends to the idle TUI: the queue lane.
	p := startBinary(t, dir, baseEnv...)
	p.until(t, "› ")
	p.send(t, "/target "+tuiID+"\r")
	p.until(t, "active agent: orchestrator → Codex session "+tuiID+" (chosen with /target)")
	p.until(t, "idle: a message is delivered at once (codex queue)")
	p.until(t, "orchestrator› ")
	p.send(t, idleQ+"\r")
	p.until(t, "preview: chat → orchestrator (Codex session "+tuiID+")")
	p.until(t, "│ "+idleQ)
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "delivered via queue at ", 30*time.Second)
	p.untilWithin(t, "[orchestrator] "+idleA, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 30*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)
	t.Logf("room screen:\n%s", p.String())
	eventually(t, 10*time.Second, "the answer on the TUI's screen", func() bool { return strings.Contains(screen(), idleA) })
	qid := checkChatLog(t, dir, idleA)
	ts, err := conversation.OpenSession(dir, tuiID)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ts.State(qid); err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneQueue ||
		st.Delivered.DeliveredAt == nil || st.Incomplete || st.Unconfirmed {
		// The queue lane's claim is confirmed by the delivery in the rollout.
		t.Fatalf("delivered/%s.json: %+v %+v %v", qid, st, st.Delivered, err)
	}
	out, _ = rb(20*time.Second, "tail", "--session", tuiID, "--from-start", "--no-follow")
	if !strings.Contains(out, "→ chat message delivered via queue") || !strings.Contains(out, idleA) {
		t.Fatalf("tail --session %s:\n%s", tuiID, out)
	}
	// What the model got: the framed message, as a user turn.
	var framed string
	for _, r := range o.Requests() {
		if u := agenttest.LastInputText(r); strings.Contains(u, "IDLE-QUESTION-16") {
			framed = u
		}
	}
	if !strings.Contains(framed, "[relay-baton chat message "+qid) || !strings.Contains(framed, "<chat-message>\n"+idleQ+"\n</chat-message>") {
		t.Fatalf("the request with the chat:\n%s", framed)
	}
}

// killCodexDaemons kills the processes run from codexHome/packages (the
// app-server daemon a codex TUI leaves behind), found in /proc.
func killCodexDaemons(codexHome string) {
	prefix := filepath.Join(codexHome, "packages") + "/"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), prefix) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// codexWorkspace is a test repository where the real codex runs against
// the mock o: dir, the CODEX_HOME, and the environment of a TUI there
// (PATH, HOME, NO_COLOR and codex's).
func codexWorkspace(t *testing.T, o *agenttest.OpenAI, codex string) (dir, codexHome string, env []string) {
	t.Helper()
	dir = agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	cenv := agenttest.CodexEnv(t, o, codex)
	codexHome, _ = agenttest.EnvValue(cenv, "CODEX_HOME")
	// The TUI starts an app-server daemon from $CODEX_HOME/packages that
	// outlives it (0.169.0): end those processes of this test's CODEX_HOME.
	t.Cleanup(func() { killCodexDaemons(codexHome) })
	// The TUI asks whether to trust a git folder: answer it as a user would
	// have once (the Claude Code tests pre-accept its trust dialog alike).
	cfg, err := os.OpenFile(filepath.Join(codexHome, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "\n[projects.%q]\ntrust_level = \"trusted\"\n", dir)
	cfg.Close()
	return dir, codexHome, append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "NO_COLOR=1"}, cenv...)
}

// startCodexTUI starts Codex's interactive TUI in a tmux pane of dir with
// env, and has it answer a first prompt (FIRST-PROMPT, which the mock
// answers with ready): tm runs a tmux command, screen captures the pane
// (logged when the test fails).
func startCodexTUI(t *testing.T, tmux, codex, dir string, env []string, ready string) (tm func(args ...string) string, screen func() string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm = func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-f", "/dev/null", "-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tuiArgs := append([]string{"new-session", "-d", "-s", "c", "-x", "120", "-y", "40", "-c", dir, "env", "-i", "TERM=xterm-256color", "LANG=C.UTF-8"}, env...)
	tm(append(tuiArgs, codex, "--sandbox", "workspace-write")...)
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	screen = func() string { return tm("capture-pane", "-p", "-J", "-t", "c", "-S", "-", "-E", "-") }
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("codex TUI:\n%s", screen())
		}
	})
	eventually(t, 30*time.Second, "the codex TUI prompt", func() bool { return strings.Contains(screen(), "Ask Codex") })
	tm("send-keys", "-t", "c", "-l", "FIRST-PROMPT: say ready")
	time.Sleep(300 * time.Millisecond)
	// A notice (a model announcement in 0.171.0) can take the first
	// Enter: press it until the answer shows. The daemon starts first.
	eventually(t, 120*time.Second, "the TUI's first answer", func() bool {
		if strings.Contains(screen(), ready) {
			return true
		}
		tm("send-keys", "-t", "c", "Enter")
		time.Sleep(time.Second)
		return strings.Contains(screen(), ready)
	})
	return tm, screen
}
