package room

import (
	"context"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/resume"
)

// The conversation ids survive in the log: a second engine (a one-shot
// with --continue) continues them, /new forgets them, and the roles keep
// their own policies on the shared conversation.
func TestConversationsFromTheLog(t *testing.T) {
	h := newHarness(t, "y", "y", "y")
	h.fr.run = func(_ context.Context, i int, r agents.Request) agents.Result {
		return agents.Result{Agent: r.Agent, FinalText: "## Goal\nx", Session: "sess-claude-1"}
	}
	if err := h.e.Ask(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Plan(context.Background(), "a task", false); err != nil {
		t.Fatal(err)
	}
	if got := h.fr.ran[1]; got.Resume != "sess-claude-1" || got.Role != agents.RolePlanner {
		t.Fatalf("the planner run did not continue the conversation: %+v", got)
	}
	if c := h.e.Conversation(agents.Claude); c == nil || c.Turns != 2 {
		t.Fatalf("conversation %+v", c)
	}

	e2, err := New(Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if e2.convs.id(agents.Claude) != "" {
		t.Fatal("a new engine continued a conversation without being asked")
	}
	if err := e2.ContinueConversations(); err != nil {
		t.Fatal(err)
	}
	if c := e2.Conversation(agents.Claude); c == nil || c.ID != "sess-claude-1" || c.Turns != 2 {
		t.Fatalf("--continue: %+v", c)
	}
	if e2.request(agents.Claude, agents.RoleExecutor, "x").Resume != "sess-claude-1" || e2.request(agents.Codex, agents.RoleExecutor, "x").Resume != "" {
		t.Fatal("requests do not carry the right conversations")
	}
	if err := e2.NewConversation(agents.Claude); err != nil {
		t.Fatal(err)
	}
	rs, err := resume.Read(e2.LogPath(), 0)
	if err != nil || len(rs.Conversations) != 0 {
		t.Fatalf("after /new the log still names %v (%v)", rs.Conversations, err)
	}
	if err := e2.NewConversation("gemini"); err == nil {
		t.Fatal("/new gemini accepted")
	}
}

// A question to an agent whose conversation already holds the plan does
// not send it again; a changed plan, or a new conversation, is sent.
func TestAskDoesNotResendPlan(t *testing.T) {
	h := newHarness(t, "y", "y", "y", "y")
	h.e.pv.autoYes = true
	h.fr.run = func(_ context.Context, i int, r agents.Request) agents.Result {
		return agents.Result{ExitCode: 0, FinalText: "ok", Session: "sess-1"}
	}
	plan := fullPlan
	writePlan(t, h, plan)
	ctx := context.Background()
	for _, q := range []string{"first?", "second?"} {
		if err := h.e.Ask(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	writePlan(t, h, plan+"\n## Extra\nmore\n")
	if err := h.e.Ask(ctx, "third?"); err != nil {
		t.Fatal(err)
	}
	h.e.NewConversation("")
	if err := h.e.Ask(ctx, "fourth?"); err != nil {
		t.Fatal(err)
	}
	marker := strings.SplitN(strings.TrimSpace(plan), "\n", 2)[0]
	for i, want := range []bool{true, false, true, true} {
		p := h.fr.ran[i].Prompt
		if got := strings.Contains(p, marker); got != want {
			t.Errorf("question %d: plan sent = %v, want %v:\n%s", i+1, got, want, p)
		}
		if !want && !strings.Contains(p, "already in this conversation") {
			t.Errorf("question %d does not say the conversation holds the plan:\n%s", i+1, p)
		}
	}
}
