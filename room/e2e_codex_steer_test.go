//go:build unix

package room

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/transcript"
)

// The steer lane, end to end with the real codex TUI in tmux against the
// mock Responses API: a message sent with `send --follow` while the TUI's
// turn runs one slow shell command reaches the model in that same turn, in
// the request that carries the command's output (before the turn's own
// answer), and its answer shows in send --follow.
func TestE2ECodexSteerMidTurn(t *testing.T) {
	const (
		steerQ = "STEER-QUESTION-23: which command is running?"
		steerA = "CODEX-STEER-ANSWER: the slow sleep."
		done   = "The slow command finished."
	)
	codex := agenttest.CodexBin(t)
	tmux := agenttest.TmuxBin(t)
	o := agenttest.NewOpenAI(t)
	o.When("STEER-QUESTION-23", agenttest.Reply(agenttest.Text(steerA)))
	o.When("RUN_SLEEP", agenttest.Reply(agenttest.Exec("sleep 6; echo slept")))
	o.When("slept", agenttest.Reply(agenttest.Text(done)))
	o.When("Wall time", agenttest.Reply(agenttest.Text(done)))
	o.When("FIRST-PROMPT", agenttest.Reply(agenttest.Text("READY-23")))
	dir, codexHome, baseEnv := codexWorkspace(t, o, codex)
	bin, _ := binaries(t)

	tm, screen := startCodexTUI(t, tmux, codex, dir, baseEnv, "READY-23")
	// The thread: the TUI's rollout.
	var thread, rollout string
	eventually(t, 30*time.Second, "the TUI's rollout", func() bool {
		ms, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
		if len(ms) != 1 {
			return false
		}
		b, err := os.ReadFile(ms[0])
		if err != nil {
			return false
		}
		line, _, _ := strings.Cut(string(b), "\n")
		m, ok := transcript.ParseRolloutMeta([]byte(line))
		thread, rollout = m.ThreadID, ms[0]
		return ok
	})

	// A turn that runs one slow shell command.
	// Typed text followed at once by Enter can be taken as a paste (the
	// Enter a newline): press Enter until the turn starts.
	tm("send-keys", "-t", "c", "-l", "RUN_SLEEP: run the slow command")
	running := func() bool {
		b, _ := os.ReadFile(rollout)
		return strings.Contains(string(b), "sleep 6; echo slept")
	}
	eventually(t, 30*time.Second, "the slow command running (its call in the rollout)", func() bool {
		if running() {
			return true
		}
		tm("send-keys", "-t", "c", "Enter")
		for range 10 {
			if running() {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	})
	// What the room's preview and /target say now (conversation reads
	// CODEX_HOME from the environment).
	t.Setenv("CODEX_HOME", codexHome)
	if s, err := conversation.OpenSession(dir, thread); err != nil {
		t.Fatal(err)
	} else if r := s.Reachability(time.Now()); !strings.Contains(r, "at its next tool call's end if the thread runs in the Codex TUI (turn/steer)") {
		t.Fatalf("reachability while in a turn: %q", r)
	}
	sendAt := len(o.Requests())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "send", "--session", thread, "--follow", steerQ)
	cmd.Dir, cmd.Env = dir, append(baseEnv, "CODEX_HOME="+codexHome)
	outB, err := cmd.CombinedOutput()
	out := string(outB)
	t.Logf("send --follow:\n%s", out)
	if err != nil {
		t.Fatalf("send --follow: %v", err)
	}
	for _, want := range []string{"delivered via steer at ", steerA} {
		if !strings.Contains(out, want) {
			t.Fatalf("send --follow lacks %q", want)
		}
	}
	// What the model got: the message in the turn's next request, the one
	// that carries the slow command's output, before the turn's answer.
	var steered string
	for _, r := range o.Requests()[sendAt:] {
		if strings.Contains(agenttest.LastInputText(r), "STEER-QUESTION-23") {
			steered = string(r.Body)
			break
		}
	}
	if steered == "" {
		t.Fatal("no request carried the steered message")
	}
	if !strings.Contains(steered, "slept") || strings.Contains(steered, done) {
		t.Fatalf("the steered message did not come at the command's tool boundary (output in the request: %v, the turn's answer already given: %v)",
			strings.Contains(steered, "slept"), strings.Contains(steered, done))
	}
	s, err := conversation.OpenSession(dir, thread)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := filepath.Glob(filepath.Join(s.DeliveredDir(), "*.json"))
	if len(ms) != 1 {
		t.Fatalf("delivered: %v", ms)
	}
	id := strings.TrimSuffix(filepath.Base(ms[0]), ".json")
	if st, err := s.State(id); err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneSteer || st.Incomplete || st.Unconfirmed {
		t.Fatalf("delivered/%s.json: %+v %v", id, st, err)
	}
	eventually(t, 20*time.Second, "the steered message and its answer on the TUI's screen", func() bool {
		sc := screen()
		return strings.Contains(sc, "STEER-QUESTION-23") && strings.Contains(sc, steerA)
	})
}
