package room

import (
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// Each agent keeps its conversation, through a real pty with the real CLIs
// against the mocks: a follow-up question's request carries the earlier
// turn, for claude and for codex, and `chat --resume` continues them.

// agentRuns returns the agent_run events that ran.
func agentRuns(t *testing.T, dir string) []events.Event {
	t.Helper()
	var out []events.Event
	for _, e := range readLog(t, dir) {
		if e.Kind == events.KindAgentRun && metaMap(e.Meta)["ran"] == true {
			out = append(out, e)
		}
	}
	return out
}

func TestE2EClaudeKeepsItsConversation(t *testing.T) {
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Text("Noted: PINEAPPLE.")),
		agenttest.Reply(agenttest.Text("You asked me to remember PINEAPPLE.")),
		agenttest.Reply(agenttest.Text("Still PINEAPPLE.")),
		agenttest.Reply(agenttest.Text("Fresh start.")),
	)
	dir := newRepo(t)
	env := append(agenttest.OfflineEnv(t, a, nil), "NO_COLOR=1")
	p := startBinary(t, dir, env...)
	p.until(t, "claude› ")
	p.send(t, "remember the word PINEAPPLE\r")
	p.until(t, "conversation: new claude conversation")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "Noted: PINEAPPLE.", 60*time.Second)
	p.until(t, "claude› ")
	p.send(t, "what word did I ask you to remember?\r")
	p.until(t, "conversation: continues claude conversation ")
	p.until(t, "(1 turn;")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "You asked me to remember PINEAPPLE.", 60*time.Second)
	p.until(t, "claude› ")
	p.send(t, "/budget\r")
	p.until(t, "2 turns")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)

	reqs := a.Agent()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "remember the word PINEAPPLE") || !strings.Contains(last, "Noted: PINEAPPLE.") {
		t.Fatalf("the follow-up request does not carry the earlier turn:\n%.3000s", last)
	}
	runs := agentRuns(t, dir)
	if len(runs) != 2 || metaMap(runs[0].Meta)[metaConversation] == nil || metaMap(runs[0].Meta)[metaConversation] != metaMap(runs[1].Meta)[metaConversation] ||
		metaMap(runs[1].Meta)[metaConversationTurns] != float64(2) {
		t.Fatalf("agent runs %+v", runs)
	}
	id := metaMap(runs[0].Meta)[metaConversation].(string)

	// chat --resume continues the same conversation; /new then starts afresh.
	p = startBinaryArgs(t, dir, []string{"chat", "--resume"}, env...)
	p.until(t, "claude conversation: "+id+" (2 turns)")
	p.until(t, "claude› ")
	p.send(t, "and now?\r")
	p.until(t, "continues claude conversation "+id+" (2 turns;")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "Still PINEAPPLE.", 60*time.Second)
	p.until(t, "claude› ")
	p.send(t, "/new claude\r")
	p.until(t, "forgot conversation")
	p.until(t, "claude› ")
	p.send(t, "hello again\r")
	p.until(t, "new claude conversation")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "Fresh start.", 60*time.Second)
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	reqs = a.Agent()
	third, fourth := string(reqs[len(reqs)-2].Body), string(reqs[len(reqs)-1].Body)
	if !strings.Contains(third, "You asked me to remember PINEAPPLE.") {
		t.Fatalf("after chat --resume the request lacks the earlier turns:\n%.3000s", third)
	}
	if strings.Contains(fourth, "PINEAPPLE") {
		t.Fatalf("after /new the request still carries the old conversation:\n%.3000s", fourth)
	}
}

func TestE2ECodexKeepsItsThread(t *testing.T) {
	o := agenttest.NewOpenAI(t,
		agenttest.Reply(agenttest.Text("noted PINEAPPLE")),
		agenttest.Reply(agenttest.Text("it was PINEAPPLE")),
	)
	dir := newRepo(t)
	p := startOffline(t, dir, nil, o)
	p.until(t, "claude› ")
	p.send(t, "/agent codex\r")
	p.until(t, "codex› ")
	p.send(t, "remember the word PINEAPPLE\r")
	p.until(t, "new codex conversation")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "noted PINEAPPLE", 60*time.Second)
	p.until(t, "codex› ")
	p.send(t, "which word?\r")
	p.until(t, "continues codex conversation ")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "it was PINEAPPLE", 60*time.Second)
	p.until(t, "codex› ")
	p.send(t, "\x04")
	p.wait(t)
	reqs := o.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(body, "remember the word PINEAPPLE") || !strings.Contains(body, "noted PINEAPPLE") {
		t.Fatalf("the follow-up request does not carry the earlier turn:\n%.3000s", body)
	}
}

func TestE2ELostConversationNeedsANewConfirmation(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("A new conversation.")))
	dir := newRepo(t)
	e, err := New(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The log names a claude session that no longer exists.
	e.emit(events.RoleClaude, "claude ask: exit 0", nil, events.AgentRunMeta{Agent: "claude", Command: "ask", Ran: true,
		ExitCode: events.Int(0), Conversation: "11111111-2222-3333-4444-555555555555", ConversationTurns: 3})
	e.Close()
	p := startBinaryArgs(t, dir, []string{"chat", "--resume"}, append(agenttest.OfflineEnv(t, a, nil), "NO_COLOR=1")...)
	p.until(t, "claude› ")
	p.send(t, "hello?\r")
	p.until(t, "continues claude conversation 11111111-2222-3333-4444-555555555555 (3 turns;")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "cannot be continued", 60*time.Second)
	p.until(t, "new claude conversation")
	p.until(t, "run this? [y/N/e] ")
	if n := len(a.Agent()); n != 0 {
		t.Fatalf("the model got %d requests before the new conversation was confirmed", n)
	}
	p.send(t, "y\r")
	p.untilWithin(t, "A new conversation.", 60*time.Second)
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	runs := agentRuns(t, dir)
	if last := runs[len(runs)-1]; metaMap(last.Meta)[metaConversation] == nil || metaMap(last.Meta)[metaConversation] == "11111111-2222-3333-4444-555555555555" {
		t.Fatalf("last run %s", last.Meta)
	}
}
