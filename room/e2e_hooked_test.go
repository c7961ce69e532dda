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
	"github.com/relay-baton/relay-baton/workspace"
)

// The Agent Room and the orchestrator lane in ONE repository (issue 11):
// after `relay-baton hook install`, one-shot `claude -p` runs (the room's
// own agent runs among them) must finish as if there were no hooks and
// never become chat targets, while a long-lived session and the
// interactive TUI keep receiving chat messages.

// oneShotBound is a generous bound for a one-shot run against the mock (it
// takes about a second; before the fix a hooked run never made its first
// request).
const oneShotBound = 20 * time.Second

// runClaude runs the real claude once in dir with stdin closed, in its own
// process group, and returns how long it took and its stdout. It fails the
// test when the run does not end within oneShotBound (killing the group and
// any hook Claude Code started in a group of its own).
func runClaude(t *testing.T, dir string, env []string, args ...string) (time.Duration, string) {
	t.Helper()
	cmd := exec.Command(agenttest.ClaudeBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TERM=dumb"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took := time.Since(start)
		if err != nil {
			t.Fatalf("claude %q: %v after %s\nstdout:\n%s\nstderr:\n%s", args, err, took, out.String(), errb.String())
		}
		return took, out.String()
	case <-time.After(oneShotBound):
		hooks := descendants(cmd.Process.Pid)
		killTree(cmd.Process.Pid)
		<-done
		t.Fatalf("claude %q in %s still running after %s (hook processes below it: %v)\nstdout:\n%s", args, dir, oneShotBound, hooks, out.String())
	}
	return 0, ""
}

// killTree kills pid's descendants (and their process groups: Claude Code
// runs each hook in a group of its own), then pid's group.
func killTree(pid int) {
	for _, p := range descendants(pid) {
		if pgid, err := syscall.Getpgid(p); err == nil && pgid != syscall.Getpgrp() {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGKILL)
}

// chatFolders lists the session folders under the workspace's chat folder.
func chatFolders(dir string) []string {
	var ids []string
	ents, _ := os.ReadDir(filepath.Join(dir, workspace.ChatDir))
	for _, e := range ents {
		if e.IsDir() && conversation.ValidSessionID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// TestE2EHookedOneShotFinishes: plain `claude -p` and `claude -p --resume`
// in a hooked repository finish like the same runs without the hooks, and
// register nothing.
func TestE2EHookedOneShotFinishes(t *testing.T) {
	a := agenttest.NewAnthropic(t)
	env := agenttest.ClaudeEnv(t, a, "")
	plain := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	hooked := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, hooked)

	bare, _ := runClaude(t, plain, env, "-p", "say hi")
	withHooks, out := runClaude(t, hooked, env, "-p", "say hi")
	if !strings.Contains(out, "done") {
		t.Fatalf("hooked claude -p printed %q, want the mock's answer", out)
	}
	// -p --resume of the hooked run's session: one-shot as well.
	var sid string
	_, js := runClaude(t, hooked, env, "-p", "--output-format", "stream-json", "--verbose", "say hi again")
	for _, l := range strings.Split(js, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["type"] == "result" {
			sid, _ = m["session_id"].(string)
		}
	}
	if sid == "" {
		t.Fatalf("no session id in the stream-json output:\n%s", js)
	}
	resumed, out := runClaude(t, hooked, env, "-p", "--output-format", "stream-json", "--verbose", "--resume", sid, "--", "and once more")
	if !strings.Contains(out, `"type":"result"`) {
		t.Fatalf("claude -p --resume printed no result:\n%s", out)
	}
	t.Logf("one-shot claude -p against the mock: %s without hooks, %s with relay-baton's hooks; -p --resume with hooks: %s",
		bare.Round(time.Millisecond), withHooks.Round(time.Millisecond), resumed.Round(time.Millisecond))
	if ids := chatFolders(hooked); len(ids) != 0 {
		t.Fatalf("one-shot runs registered chat sessions %v", ids)
	}
	bin, _ := binaries(t)
	home, _ := agenttest.EnvValue(env, "HOME")
	cmd := exec.Command(bin, "targets", "--json")
	cmd.Dir, cmd.Env = hooked, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	b, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("targets after one-shot runs: %v %s", err, b)
	}
}

// TestE2EHookedPlanKeepsTheLead: with a long-lived session running in the
// hooked repository, `relay-baton plan --yes` completes and writes
// plan.md; the planner run is not registered, `targets` still offers only
// the long-lived session as the lead, and idle delivery to it still works.
func TestE2EHookedPlanKeepsTheLead(t *testing.T) {
	const question, answer = "IDLE-AFTER-PLAN-4: still there?", "STILL-HERE: yes, after the plan."
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("Ready.")))
	a.When("PLAN-TASK-3", agenttest.Reply(agenttest.Text("## Goal\nA --verbose flag.\n\n## Steps\n1. Edit main.go\n")))
	a.When("IDLE-AFTER-PLAN-4", agenttest.Reply(agenttest.Text(answer)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := agenttest.ClaudeEnv(t, a, agenttest.ClaudeBin(t))
	ls := startLiveSession(t, dir, env)
	ls.say(t, "say ready")
	s := chatSession(t, dir)
	eventually(t, 30*time.Second, "the end of the first turn", func() bool { return ls.results() >= 1 })
	eventually(t, 15*time.Second, "an armed idle-lane waiter", func() bool { return !s.Busy(time.Now()) && s.Waiting() })

	bin, _ := binaries(t)
	relay := func(timeout time.Duration, args ...string) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}, env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			if len(out) > 4000 { // transcript lines can be 100+ KB
				out = append([]byte("…"), out[len(out)-4000:]...)
			}
			t.Fatalf("relay-baton %q: %v after %s\n%s", args, err, time.Since(start), out)
		}
		return string(out), time.Since(start)
	}
	out, took := relay(60*time.Second, "plan", "--yes", "PLAN-TASK-3: add a --verbose flag")
	t.Logf("relay-baton plan --yes in the hooked repository: %s\n%s", took.Round(time.Millisecond), out)
	plan, err := os.ReadFile(filepath.Join(dir, ".ai-session", "plan.md"))
	if err != nil || !strings.Contains(string(plan), "A --verbose flag.") {
		t.Fatalf("plan.md: %q %v", plan, err)
	}
	if ids := chatFolders(dir); len(ids) != 1 || ids[0] != s.ID {
		t.Fatalf("chat folders %v, want only the long-lived session %s (the planner run registered itself?)", ids, s.ID)
	}
	out, _ = relay(10*time.Second, "targets", "--json")
	var ts []conversation.Target
	if err := json.Unmarshal([]byte(out), &ts); err != nil || len(ts) != 1 || ts[0].SessionID != s.ID || !ts[0].Lead || ts[0].State != procfacts.Live {
		t.Fatalf("targets after the plan: %v\n%s", err, out)
	}
	out, _ = relay(10*time.Second, "targets", "--all", "--json")
	var all []conversation.Target
	json.Unmarshal([]byte(out), &all)
	for _, tg := range all {
		if tg.SessionID != s.ID {
			t.Errorf("relay-baton's own planner run in targets --all: %+v", tg)
		}
	}
	// Its transcript is there: a filter keeps it out, not its absence.
	home, _ := agenttest.EnvValue(env, "HOME")
	transcripts, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	if len(transcripts) < 2 {
		t.Errorf("transcripts %v: want the live session's and the planner run's", transcripts)
	}
	out, took = relay(60*time.Second, "send", "--lead", "--follow", question)
	if !strings.Contains(out, "delivered via rewake") || !strings.Contains(out, answer) || !strings.Contains(out, "✓ end of turn") {
		t.Fatalf("send --follow to the lead after the plan:\n%s", out)
	}
	t.Logf("idle delivery after the plan: answered in %s", took.Round(time.Millisecond))
}

// tuiSession is the real interactive Claude Code in a tmux pane.
type tuiSession struct {
	tmux, sock string
	pid        int
}

func (u *tuiSession) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(u.tmux, append([]string{"-f", "/dev/null", "-S", u.sock}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (u *tuiSession) screen(t testing.TB) string {
	return u.run(t, "capture-pane", "-p", "-J", "-t", "tui", "-S", "-", "-E", "-")
}

// waitScreen waits up to d for want on the pane.
func (u *tuiSession) waitScreen(t testing.TB, d time.Duration, want string) {
	t.Helper()
	d = max(d, tmuxGuard) // a hang guard, never a bound on a loaded machine
	deadline := time.Now().Add(d)
	for {
		sc := u.screen(t)
		if strings.Contains(sc, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the TUI never showed %q within %s; pane:\n%s", want, d, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startTUI starts `claude --permission-mode default` in a tmux pane of dir,
// past onboarding and the trust dialog (~/.claude.json of the temporary
// HOME, where claude keeps both), and waits for its prompt.
func startTUI(t testing.TB, dir string, env []string) *tuiSession {
	t.Helper()
	tmux := agenttest.TmuxBin(t)
	bin := agenttest.ClaudeBin(t)
	home, _ := agenttest.EnvValue(env, "HOME")
	abs, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true,
		"projects": map[string]any{abs: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	u := &tuiSession{tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"new-session", "-d", "-s", "tui", "-x", "150", "-y", "45", "-c", dir,
		"env", "-i", "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	args = append(append(args, env...), bin, "--permission-mode", "default", "--allowedTools", "Bash")
	u.run(t, args...)
	t.Cleanup(func() {
		if t.Failed() {
			if sc, err := exec.Command(tmux, "-S", u.sock, "capture-pane", "-p", "-J", "-t", "tui", "-S", "-", "-E", "-").Output(); err == nil {
				t.Logf("TUI pane:\n%s", sc)
			}
		}
		if u.pid > 0 {
			killTree(u.pid)
		}
		exec.Command(tmux, "-S", u.sock, "kill-server").Run()
	})
	pid := strings.TrimSpace(u.run(t, "list-panes", "-t", "tui", "-F", "#{pane_pid}"))
	u.pid, _ = strconv.Atoi(pid)
	u.waitScreen(t, 60*time.Second, "❯")
	return u
}

// typeLine types text into the TUI and submits it.
func (u *tuiSession) typeLine(t testing.TB, text string) {
	t.Helper()
	u.run(t, "send-keys", "-t", "tui", "-l", text)
	// Enter only once the input box shows the text: an Enter that arrives
	// with the typing is taken as part of a paste, not as the submit.
	tail := []rune(text)
	tail = tail[max(0, len(tail)-24):]
	u.waitScreen(t, tmuxGuard, string(tail))
	u.run(t, "send-keys", "-t", "tui", "Enter")
}

// TestE2EInteractiveTUIFromTheRoom: the real interactive Claude Code in
// tmux, the room on a pty as the sender. A message sent while the TUI runs
// a slow tool is delivered by the Stop hook at the turn end; one sent while
// it sits idle is delivered by the asyncRewake waiter; both answers appear
// inline in the room.
func TestE2EInteractiveTUIFromTheRoom(t *testing.T) {
	const (
		busyQ, busyA = "TUI-BUSY-Q5: how far along?", "TUI-HOOK-ANSWER: the slow step is done."
		idleQ, idleA = "TUI-IDLE-Q6: anything left?", "TUI-REWAKE-ANSWER: nothing is left."
	)
	a := agenttest.NewAnthropic(t)
	a.When("TUI-SLOW-STEP", agenttest.Reply(agenttest.Bash("sleep 6; echo slow-step-finished")))
	a.When("TUI-BUSY-Q5", agenttest.Reply(agenttest.Text(busyA)))
	a.When("TUI-IDLE-Q6", agenttest.Reply(agenttest.Text(idleA)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := agenttest.ClaudeEnv(t, a, "")
	started := time.Now()
	u := startTUI(t, dir, env)
	s := chatSession(t, dir)
	t.Logf("interactive TUI at its prompt, registered as %s, after %s", s.ID, time.Since(started).Round(time.Millisecond))
	if p, ok := s.Process(); !ok || p.PID != u.pid {
		t.Fatalf("the TUI's recorded process %+v, want pid %d", p, u.pid)
	}

	// Busy: the TUI runs `sleep 6` in Bash when the room sends.
	u.typeLine(t, "TUI-SLOW-STEP: run the slow step")
	eventually(t, 30*time.Second, "the TUI's slow Bash step", func() bool {
		for _, r := range a.Agent() {
			if strings.Contains(agenttest.LastUserText(r), "TUI-SLOW-STEP") {
				return s.Busy(time.Now())
			}
		}
		return false
	})
	home, _ := agenttest.EnvValue(env, "HOME")
	p := startBinary(t, dir, "NO_COLOR=1", "HOME="+home)
	sendFromRoom(t, p, s.ID, busyQ, "in a turn: a message is delivered when the turn ends (Stop hook)")
	p.until(t, "queued (0 ahead): message ")
	p.untilWithin(t, "delivered via hook at ", 40*time.Second)
	p.untilWithin(t, "[orchestrator] "+busyA, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 30*time.Second)
	p.until(t, "orchestrator› ")

	// Idle: wait for the turn to end and the waiter to arm, then send.
	eventually(t, 30*time.Second, "the TUI idle with a waiter armed", func() bool { return !s.Busy(time.Now()) && s.Waiting() })
	p.send(t, idleQ+"\r")
	p.until(t, "idle, waiter armed: a message is delivered at once (rewake)")
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "delivered via rewake at ", 10*time.Second)
	p.untilWithin(t, "[orchestrator] "+idleA, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 30*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)
	t.Logf("room screen:\n%s", p.String())
	u.waitScreen(t, 10*time.Second, idleA) // the TUI shows the answer too

	var lanes []string
	for _, e := range readLog(t, dir) {
		if e.Kind == "chat_delivered" {
			lanes = append(lanes, fmt.Sprint(metaMap(e.Meta)["lane"]))
		}
	}
	ents, _ := os.ReadDir(s.DeliveredDir())
	var got []string
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			if st, err := s.State(id); err == nil && st.Delivered != nil {
				got = append(got, string(st.Delivered.Lane))
			}
		}
	}
	if strings.Join(got, ",") != "hook,rewake" && strings.Join(got, ",") != "rewake,hook" || len(got) != 2 {
		t.Fatalf("delivered lanes %v (room log %v), want one hook and one rewake", got, lanes)
	}
}
