package room

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/workspace"
)

// A failed run says why in the log (so replay and resume show it, not only
// the terminal), a conversation whose first run failed is not offered for
// continuation, and a one-shot status afterwards shows that run, reason
// included.
func TestFailedRunIsRecordedWithItsReason(t *testing.T) {
	h := newHarness(t, "y")
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{Agent: agents.Claude, ExitCode: 1, Duration: 6949 * time.Millisecond, Session: "94114fec-67f3-4f13-8b3b-dc9385712188",
			Err: &agents.LoginError{Agent: agents.Claude}}
	}
	if _, err := h.e.Process(context.Background(), "/plan add a flag"); err == nil {
		t.Fatal("a failed run returned no error")
	}
	var run *events.Event
	for _, ev := range h.events(t) {
		if ev.Kind == events.KindAgentRun {
			run = &ev
		}
	}
	want := "claude is not logged in: run `claude` in a terminal of its own and type /login, then try again"
	if run == nil || run.Text != "claude plan: exit 1 in 6.949s: "+want {
		t.Fatalf("agent_run %+v", run)
	}
	m, err := events.MetaOf[events.AgentRunMeta](run)
	if err != nil || m.Reason != want || m.Conversation != "" {
		t.Fatalf("agent_run meta %s (%v): want the reason and no conversation", run.Meta, err)
	}
	if c := h.e.convs.id(agents.Claude); c != "" {
		t.Fatalf("the failed first run's conversation %s is kept", c)
	}

	// replay prints the event's text; resume names the reason and offers
	// no conversation.
	rs, err := resume.Read(workspace.LogPath(h.dir), 6)
	if err != nil || rs.LastRun == nil || rs.LastRun.Reason != want || len(rs.Conversations) != 0 {
		t.Fatalf("resume: %+v %v", rs, err)
	}
	if w := runWords(rs.LastRun, time.Now()); !strings.Contains(w, "exit 1") || !strings.HasSuffix(w, ": "+want) {
		t.Fatalf("resume's last run: %q", w)
	}

	// A one-shot status (a read-only engine of its own) shows the run.
	ro, err := New(Config{Dir: h.dir, Out: &strings.Builder{}, ReadOnly: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s := ro.Status(context.Background())
	if s.LastRun == nil || !s.LastRun.FromLog || !strings.Contains(s.Text(), "last run: claude /plan, exit 1 in 6.949s at ") ||
		!strings.Contains(s.Text(), "(from the log): "+want) {
		t.Fatalf("one-shot status after a failed plan:\n%s", s.Text())
	}
}

// A log written before failed first runs were left out: the conversation
// it names for a failed first run is not offered either.
func TestResumeSkipsAConversationThatNeverCompletedATurn(t *testing.T) {
	h := newHarness(t)
	h.e.emit(events.RoleClaude, "claude plan: exit 1 in 6.949s", nil, events.AgentRunMeta{Agent: agents.Claude, Command: "plan",
		Confirmed: true, Ran: true, ExitCode: events.Int(1), Error: "agent claude: Not logged in", Conversation: "94114fec-67f3-4f13-8b3b-dc9385712188", ConversationTurns: 1})
	rs, err := resume.Read(workspace.LogPath(h.dir), 6)
	if err != nil || len(rs.Conversations) != 0 {
		t.Fatalf("resume offers %+v (%v)", rs.Conversations, err)
	}
}
