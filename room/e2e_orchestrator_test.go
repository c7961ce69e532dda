//go:build unix

package room

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/relay-baton/relay-baton/subprocess"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// Acceptance of the orchestrator lane with the real Claude Code: a
// long-lived `claude -p --input-format stream-json` session against the
// mock Messages API, with relay-baton's hooks installed by the built
// binary, and the built room chatting with it through a pseudo-terminal.

// liveSession is a running `claude -p --input-format stream-json` session.
type liveSession struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []string // stdout (stream-json)
	stderr bytes.Buffer
	done   chan struct{}
}

// installHooks runs the built `relay-baton hook install` in dir (project
// scope; the hook commands name the built binary), as a user would with
// the pinned claude: the hooks are in exec form ("args", no shell), which
// the real Claude Code of the end-to-end tests then runs.
func installHooks(t testing.TB, dir string) {
	t.Helper()
	bin, _ := binaries(t)
	cmd := exec.Command(bin, "hook", "install", "--wait-timeout", "60s")
	cmd.Dir = dir
	// A HOME of its own: with HOME=dir, the go command that hook install
	// may ask about its build cache writes .config/go/telemetry into the
	// repository, and the planner then lists those files.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "RELAY_BATON_CLAUDE=" + agenttest.ClaudeBin(t)}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Installed relay-baton's chat hooks in "+filepath.Join(dir, ".claude", "settings.json")) || !strings.Contains(string(out), "Form: exec (no shell)") {
		t.Fatalf("hook install: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if !strings.Contains(string(b), `"command": "`+bin+`"`) || !strings.Contains(string(b), `"stop"`) || !strings.Contains(string(b), `"asyncRewake": true`) {
		t.Fatalf("settings.json:\n%s", b)
	}
}

// startLiveSession starts claude in dir with env (ClaudeEnv) in its own
// process group, killed with the whole group when the test ends.
func startLiveSession(t *testing.T, dir string, env []string) *liveSession {
	t.Helper()
	bin := agenttest.ClaudeBin(t)
	cmd := exec.Command(bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TERM=dumb"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ls := &liveSession{cmd: cmd, done: make(chan struct{})}
	var err error
	if ls.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &ls.mu, w: &ls.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(ls.done)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				ls.mu.Lock()
				ls.lines = append(ls.lines, strings.TrimSpace(line))
				ls.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		// A stream-json session waits for an armed asyncRewake waiter when
		// its stdin closes: end the whole process group instead, and the
		// hooks it started (Claude Code runs each in a group of its own).
		for _, pid := range descendants(cmd.Process.Pid) {
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid != syscall.Getpgrp() {
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		ls.stdin.Close()
		select {
		case <-ls.done:
		case <-time.After(time.Minute):
		}
		cmd.Wait()
		if t.Failed() {
			ls.mu.Lock()
			t.Logf("claude stdout:\n%s\nclaude stderr:\n%s", strings.Join(ls.lines, "\n"), ls.stderr.String())
			ls.mu.Unlock()
			if home, ok := agenttest.EnvValue(env, "HOME"); ok {
				ts, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
				for _, tr := range ts {
					b, _ := os.ReadFile(tr)
					t.Logf("transcript %s:\n%s", tr, b)
				}
			}
		}
	})
	return ls
}

// descendants lists the processes below pid (from /proc; empty elsewhere).
func descendants(pid int) []int { return subprocess.Descendants(pid) }

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// say sends one user turn on the session's stdin.
func (ls *liveSession) say(t *testing.T, text string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	if _, err := ls.stdin.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// results counts the stream-json result lines (finished turns).
func (ls *liveSession) results() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, l := range ls.lines {
		if strings.HasPrefix(l, "{") && strings.Contains(l, `"type":"result"`) {
			n++
		}
	}
	return n
}

// eventually polls cond every 20 ms until it holds, failing after d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	d = max(d, ptyGuard) // a hang guard, never a bound on a loaded machine
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// chatSession waits for the session's chat folder (the SessionStart or
// UserPromptSubmit hook creates its inbox) and returns it.
func chatSession(t testing.TB, dir string) *conversation.Session {
	t.Helper()
	var s *conversation.Session
	eventually(t, 30*time.Second, "the session's inbox (hooks not run?)", func() bool {
		ents, _ := os.ReadDir(filepath.Join(dir, workspace.ChatDir))
		for _, e := range ents {
			if cs, err := conversation.OpenSession(dir, e.Name()); err == nil && cs.ChatCapable() {
				s = cs
				return true
			}
		}
		return false
	})
	return s
}

// sentID returns the message id of the room's single chat_sent event.
func chatEvents(t *testing.T, dir string) (id string, kinds []string, list []events.Event) {
	t.Helper()
	for _, e := range readLog(t, dir) {
		switch e.Kind {
		case events.KindChatSent, events.KindChatDelivered, events.KindChatReply:
			kinds = append(kinds, string(e.Kind))
			list = append(list, e)
			if e.Kind == events.KindChatSent {
				id, _ = metaMap(e.Meta)["messageId"].(string)
			}
		}
	}
	return id, kinds, list
}

// transcriptTime returns the timestamp of the first transcript line that
// contains all of subs.
func transcriptTime(t *testing.T, path string, subs ...string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
lines:
	for _, l := range strings.Split(string(b), "\n") {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue lines
			}
		}
		var v struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal([]byte(l), &v) == nil {
			return v.Timestamp
		}
	}
	t.Fatalf("no transcript line with %q in %s", subs, path)
	return time.Time{}
}

// sendFromRoom switches the room to the orchestrator, types text and
// confirms it; wantState is the session state the preview must show.
func sendFromRoom(t *testing.T, p *proc, sid, text, wantState string) {
	t.Helper()
	p.until(t, "claude› ")
	p.send(t, "/agent orchestrator\r")
	p.until(t, "active agent: orchestrator → Claude Code session "+sid+" (the lead)")
	p.until(t, "orchestrator› ")
	p.send(t, text+"\r")
	p.until(t, "preview: chat → orchestrator (Claude Code session "+sid+")")
	p.until(t, wantState)
	p.until(t, "│ "+text)
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "y\r")
}

func checkChatLog(t *testing.T, dir, answer string) string {
	t.Helper()
	id, kinds, list := chatEvents(t, dir)
	if strings.Join(kinds, ",") != "chat_sent,chat_delivered,chat_reply" {
		t.Fatalf("chat events %v", kinds)
	}
	for _, e := range list {
		if metaMap(e.Meta)["messageId"] != id {
			t.Errorf("%s for message %v, want %s", e.Kind, metaMap(e.Meta)["messageId"], id)
		}
	}
	if !strings.Contains(list[2].Text, answer) || list[2].Refs["transcript"] == "" {
		t.Errorf("chat_reply %+v", list[2])
	}
	return id
}

// TestE2EOrchestratorBusyHookLane: a message sent while the session runs a
// 5 s tool is delivered by the Stop hook at the turn boundary.
func TestE2EOrchestratorBusyHookLane(t *testing.T) {
	const question, answer = "BUSY-QUESTION-7: is the build green?", "HOOK-ANSWER: yes, the build is green."
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Bash("echo waiting && sleep 5 && echo done")),
		agenttest.Reply(agenttest.Text("The slow command finished.")),
		agenttest.Reply(agenttest.Text(answer)), // after the chat turn's tool
	)
	// The chat turn: a look at the build (a tool), then the answer.
	a.When("BUSY-QUESTION-7", agenttest.Reply(agenttest.Thinking("the user asks about the build"), agenttest.Bash("echo build-status: green")))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := agenttest.ClaudeEnv(t, a, "")
	ls := startLiveSession(t, dir, env)
	ls.say(t, "run the slow command")
	s := chatSession(t, dir)
	// The tool is running: the first agent request was answered with it.
	eventually(t, 30*time.Second, "the first turn's Bash tool", func() bool { return len(a.Agent()) >= 1 })
	home, _ := agenttest.EnvValue(env, "HOME")
	p := startBinary(t, dir, "NO_COLOR=1", "HOME="+home)
	sendFromRoom(t, p, s.ID, question, "in a turn: a message is delivered when the turn ends (Stop hook)")
	p.until(t, "queued (0 ahead): message ")
	p.untilWithin(t, "delivered via hook at ", 30*time.Second)
	p.untilWithin(t, "[orchestrator] ⚙ Bash: run echo build-status: green", 30*time.Second)
	p.untilWithin(t, "[orchestrator] "+answer, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 30*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)
	t.Logf("room screen:\n%s", p.String())

	id := checkChatLog(t, dir, answer)
	st, err := s.State(id)
	if err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneHook {
		t.Fatalf("delivered/%s.json: %+v %v", id, st.Delivered, err)
	}
	// The mock received the framed text as the turn after the tool's.
	var framed string
	for _, r := range a.Agent() {
		if u := agenttest.LastUserText(r); strings.Contains(u, "BUSY-QUESTION-7") {
			framed = u
		}
	}
	for _, want := range []string{"[relay-baton chat message " + id + " from relay-baton room", "<chat-message>\n" + question + "\n</chat-message>"} {
		if !strings.Contains(framed, want) {
			t.Fatalf("the request with the chat lacks %q:\n%s", want, framed)
		}
	}
	// Latencies, from the files: the turn's last assistant line, the claim,
	// the delivery line in the transcript.
	reg, _ := s.Registration()
	turnEnd := transcriptTime(t, reg.TranscriptPath, `"type":"assistant"`, "The slow command finished.")
	shown := transcriptTime(t, reg.TranscriptPath, "Stop hook feedback", id)
	t.Logf("hook lane: queued %s before the turn ended; claimed %s after the turn's last assistant line; in the transcript %s after the claim",
		turnEnd.Sub(st.Delivered.CreatedAt).Round(time.Millisecond), st.Delivered.DeliveredAt.Sub(turnEnd).Round(time.Millisecond),
		shown.Sub(*st.Delivered.DeliveredAt).Round(time.Millisecond))
	if !st.Delivered.CreatedAt.Before(turnEnd) {
		t.Fatalf("the message was queued at %s, after the turn ended at %s: not a busy-session delivery", st.Delivered.CreatedAt, turnEnd)
	}
}

// TestE2EOrchestratorIdleRewakeLane: a message sent to an idle session is
// delivered by the asyncRewake waiter within a second and answered inline.
func TestE2EOrchestratorIdleRewakeLane(t *testing.T) {
	const question, answer = "IDLE-QUESTION-9: anything running?", "REWAKE-ANSWER: nothing is running."
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("Ready.")))
	a.When("IDLE-QUESTION-9", agenttest.Reply(agenttest.Text(answer)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := agenttest.ClaudeEnv(t, a, "")
	ls := startLiveSession(t, dir, env)
	ls.say(t, "say ready")
	s := chatSession(t, dir)
	eventually(t, 30*time.Second, "the end of the first turn", func() bool { return ls.results() >= 1 })
	eventually(t, 15*time.Second, "an armed idle-lane waiter", func() bool { return !s.Busy(time.Now()) && s.Waiting() })
	home, _ := agenttest.EnvValue(env, "HOME")
	p := startBinary(t, dir, "NO_COLOR=1", "HOME="+home)
	sendFromRoom(t, p, s.ID, question, "idle, waiter armed: a message is delivered at once (rewake)")
	p.until(t, "queued (0 ahead): message ")
	p.untilWithin(t, "delivered via rewake at ", 10*time.Second)
	p.untilWithin(t, "[orchestrator] "+answer, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 30*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)
	t.Logf("room screen:\n%s", p.String())

	id := checkChatLog(t, dir, answer)
	st, err := s.State(id)
	if err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneRewake {
		t.Fatalf("delivered/%s.json: %+v %v", id, st.Delivered, err)
	}
	latency := st.Delivered.DeliveredAt.Sub(st.Delivered.CreatedAt)
	reg, _ := s.Registration()
	shown := transcriptTime(t, reg.TranscriptPath, "system-reminder", id)
	t.Logf("rewake lane: claimed %s after the enqueue; in the transcript %s after the claim", latency, shown.Sub(*st.Delivered.DeliveredAt).Round(time.Millisecond))
	// That the waiter is woken by the enqueue itself, not by a poll, is
	// TestBusyAndWaitClaim's (conversation): here only the order is held.
	if latency < 0 {
		t.Fatalf("rewake delivery before the enqueue (createdAt %s, deliveredAt %s)", st.Delivered.CreatedAt, st.Delivered.DeliveredAt)
	}
	var framed string
	for _, r := range a.Agent() {
		if u := agenttest.LastUserText(r); strings.Contains(u, "IDLE-QUESTION-9") {
			framed = u
		}
	}
	if !strings.Contains(framed, "[relay-baton chat message "+id) || !strings.Contains(framed, "<chat-message>\n"+question+"\n</chat-message>") {
		t.Fatalf("the request with the chat:\n%s", framed)
	}
}

// TestPTYOrchestratorCtrlCKeepsQueued: in the built room on a real
// terminal, Ctrl-C while a message waits for a busy session stops waiting
// and says the message is still queued; /cancel then removes it.
func TestPTYOrchestratorCtrlCKeepsQueued(t *testing.T) {
	dir := newRepo(t)
	cfg := t.TempDir()
	s, err := conversation.OpenSession(dir, simSID)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), simSID+".jsonl")
	os.WriteFile(tr, nil, 0o600)
	if err := s.Register(conversation.Registration{TranscriptPath: tr, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	s.MarkBusy()
	p := startBinary(t, dir, "NO_COLOR=1", "CLAUDE_CONFIG_DIR="+cfg)
	p.until(t, "claude› ")
	p.send(t, "/agent orchestrator\r")
	p.until(t, "in a turn: a message is delivered when the turn ends (Stop hook)")
	p.until(t, "orchestrator› ")
	p.send(t, "are you still on the migration?\r")
	p.until(t, "send this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "queued (0 ahead): message ")
	eventually(t, 5*time.Second, "the message in the inbox", func() bool { q, _ := s.Queue(); return q.Depth == 1 })
	time.Sleep(100 * time.Millisecond)
	p.send(t, "\x03")
	p.until(t, "stopped waiting: message ")
	p.until(t, " is still queued (0 ahead) and will be delivered at the session's next turn boundary; /cancel removes it.")
	p.until(t, "orchestrator› ")
	p.send(t, "/cancel\r")
	p.until(t, "removed from the inbox of session "+simSID)
	p.until(t, "orchestrator› ")
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("queue depth %d after /cancel", q.Depth)
	}
	p.send(t, "\x04")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	_, kinds, _ := chatEvents(t, dir)
	if strings.Join(kinds, ",") != "chat_sent" {
		t.Fatalf("chat events %v", kinds)
	}
}
