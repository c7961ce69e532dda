//go:build unix

package room

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// TestE2ETwoMessagesOneBusyTurn: two messages sent with `send --follow`
// while the real Claude Code TUI runs one slow tool call. The first
// reaches the model with the tool's result and is answered; the second
// waits (send says behind which) until that turn ends, then gets a turn of
// its own. No request hands both to the model, and each send, each stored
// reply and the chat log show its own answer.
func TestE2ETwoMessagesOneBusyTurn(t *testing.T) {
	const (
		q1, a1 = "TWO-Q1: how far along?", "TWO-A1: the slow step is done."
		q2, a2 = "TWO-Q2: and what is next?", "TWO-A2: nothing is next."
	)
	a := agenttest.NewAnthropic(t)
	// The second's rule first: a request that carried both would get its
	// answer, and the first's reply would be wrong.
	a.WhenTail("TWO-Q2", agenttest.Reply(agenttest.Text(a2)))
	a.WhenTail("TWO-Q1", agenttest.Reply(agenttest.Text(a1)))
	a.When("TWO-SLOW-STEP", agenttest.Reply(agenttest.Bash("sleep 8; echo slow-step-finished")))
	a.When("slow-step-finished", agenttest.Reply(agenttest.Text("TWO-TURN-END")))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := messagingEnv(t, a)
	u := startTUI(t, dir, env)
	s := chatSession(t, dir)
	eventually(t, 30*time.Second, "the session's messaging socket recorded by its hooks", func() bool {
		_, err := s.SocketLane()
		return err == nil
	})
	u.typeLine(t, "TWO-SLOW-STEP: run the slow step")
	eventually(t, 30*time.Second, "the TUI's slow Bash step", func() bool {
		_, ok := requestWith(a, "TWO-SLOW-STEP")
		return ok && s.Busy(time.Now())
	})
	type result struct{ out string }
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		out, _ := relayRun(t, dir, env, 120*time.Second, "send", "--lead", "--follow", q1)
		first <- result{out}
	}()
	eventually(t, 30*time.Second, "the first message posted", func() bool {
		ents, _ := os.ReadDir(s.DeliveredDir())
		return len(ents) == 1
	})
	go func() {
		out, _ := relayRun(t, dir, env, 120*time.Second, "send", "--lead", "--follow", q2)
		second <- result{out}
	}()
	r1, r2 := <-first, <-second
	id1, id2 := sentID(t, r1.out), sentID(t, r2.out)
	if !strings.Contains(r1.out, a1) || strings.Contains(r1.out, a2) {
		t.Fatalf("the first send shows another answer:\n%s", r1.out)
	}
	if !strings.Contains(r2.out, a2) || strings.Contains(r2.out, a1) || !strings.Contains(r2.out, "waits until message "+id1+" is answered") {
		t.Fatalf("the second send:\n%s", r2.out)
	}
	for _, r := range a.Agent() {
		if tail := agenttest.TailText(r); strings.Contains(tail, "chat message "+id1+" ") && strings.Contains(tail, "chat message "+id2+" ") {
			t.Fatalf("one request handed both messages to the model:\n%s", tail)
		}
	}
	if text, _ := s.Reply(id1); text != a1 {
		t.Errorf("the first's stored reply %q, want %q", text, a1)
	}
	if text, _ := s.Reply(id2); text != a2 {
		t.Errorf("the second's stored reply %q, want %q", text, a2)
	}
	log, _ := os.ReadFile(filepath.Join(s.Dir(), "log.jsonl"))
	for id, want := range map[string]string{id1: a1, id2: a2} {
		if !strings.Contains(string(log), `"text":"`+want+`","id":"`+id+`"`) {
			t.Errorf("log.jsonl has no reply %q for %s:\n%s", want, id, log)
		}
	}
	t.Logf("first:\n%s\nsecond:\n%s", r1.out, r2.out)
}
