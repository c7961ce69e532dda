package room

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/resume"
)

// Each agent keeps one conversation per room session: the first run of an
// agent starts it (claude's session id, codex's thread id, reported by the
// run) and every later run of that agent continues it (`claude -p --resume
// <id>`, `codex exec resume <id>`), whatever its role: each run keeps its
// own permission policy. The ids are logged in agent_run events (meta
// "conversation", "conversationTurns"), so `chat --resume` and the
// one-shot commands' --continue pick them up again; /new forgets them.

// agentConvs is each agent's conversation in this room session, by agent
// (claude, codex): what the next run continues.
type agentConvs struct{ m map[string]*AgentConversation }

// AgentConversation is an agent's conversation in this room session.
type AgentConversation struct {
	ID    string `json:"id"`    // claude session id / codex thread id
	Turns int    `json:"turns"` // runs of relay-baton in it
	// InputTokens is what the last run sent the model (its context, with
	// cached tokens): the conversation's size as the model sees it.
	InputTokens int64 `json:"inputTokens,omitempty"`
	// plan is the hash of the plan.md text this conversation holds (it
	// wrote it, or a question sent it), "" when it holds none: the next
	// question then does not send the plan again.
	plan string
	// Reported is the usage the conversation's last run reported, as its
	// CLI reports it (running totals: see costs.go), to tell the next
	// run's own usage from it.
	Reported events.Usage `json:"-"`
}

// planHash identifies a plan's text, white space at its ends aside.
func planHash(text string) string {
	h := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return hex.EncodeToString(h[:])
}

// notePlan records that agent's conversation session now holds plan.
func (b *agentConvs) notePlan(agent, session, plan string) {
	if c := b.m[agent]; c != nil && c.ID == session && session != "" {
		c.plan = planHash(plan)
	}
}

// holdsPlan reports whether the conversation agent's next run continues
// already holds plan, unchanged.
func (b *agentConvs) holdsPlan(agent, plan string) bool {
	c := b.m[agent]
	return c != nil && c.ID != "" && c.plan != "" && c.plan == planHash(plan)
}

// Meta keys of the conversation fields in events (agent_run, status).
const (
	metaConversation      = "conversation"      // agent_run: the session/thread id the run used
	metaConversationTurns = "conversationTurns" // agent_run: runs in it so far
	metaNewConversation   = "newConversation"   // status: /new forgot this agent's conversation
)

// Conversation returns the agent's conversation, nil when the next run
// starts a new one.
func (e *Engine) Conversation(agent string) *AgentConversation { return e.convs.get(agent) }

// get is the agent's conversation, nil when the next run starts a new one.
func (b *agentConvs) get(agent string) *AgentConversation {
	if c := b.m[agent]; c != nil && c.ID != "" {
		cp := *c
		return &cp
	}
	return nil
}

// id is the id the next run of agent continues, "" for a new one.
func (b *agentConvs) id(agent string) string {
	if c := b.get(agent); c != nil {
		return c.ID
	}
	return ""
}

// note records the conversation a run used; it returns the
// number of turns it now holds (0 when the run reported none).
func (b *agentConvs) note(agent string, res agents.Result, own events.Usage) int {
	if res.Session == "" || res.ResumeFailed {
		return 0
	}
	if b.m == nil {
		b.m = map[string]*AgentConversation{}
	}
	c := b.m[agent]
	if c == nil || c.ID != res.Session {
		if res.Err != nil {
			// A conversation whose first run failed (not logged in, an
			// API error, cancelled) never completed a turn: nothing to
			// continue, so it is neither kept nor logged.
			return 0
		}
		c = &AgentConversation{ID: res.Session}
		b.m[agent] = c
	}
	c.Turns++
	if n := own.InputTokens + own.CachedInputTokens; n > 0 {
		c.InputTokens = n
	}
	if res.Usage != (events.Usage{}) {
		c.Reported = res.Usage
	}
	return c.Turns
}

// forget makes the next run of agent start a new conversation.
func (b *agentConvs) forget(agent string) {
	delete(b.m, agent)
}

// NewConversation forgets the conversation of agent ("" = every agent), so
// that its next run starts afresh; it is logged, so a resumed room does not
// continue it either.
func (e *Engine) NewConversation(agent string) error {
	list := []string{agent}
	switch agent {
	case "":
		list = []string{agents.Claude, agents.Codex}
	case agents.Claude, agents.Codex:
	default:
		return fmt.Errorf("/new takes claude or codex (or nothing, for both), not %q", agent)
	}
	for _, a := range list {
		old := e.convs.id(a)
		e.convs.forget(a)
		if old == "" {
			e.Say("%s: the next run starts a new conversation (none yet)", a)
		} else {
			e.Say("%s: forgot conversation %s; the next run starts a new one", a, render.ShortID(old))
		}
		e.emit(events.RoleRelayBaton, a+": new conversation", nil,
			events.StatusMeta{Agent: a, NewConversation: a, Previous: old})
	}
	return nil
}

func cmdNew(e *Engine, _ context.Context, args string) error {
	f := strings.Fields(strings.ToLower(args))
	if len(f) > 1 {
		return fmt.Errorf("usage: /new [claude|codex], not /new %s", args)
	}
	a := ""
	if len(f) == 1 {
		a = f[0]
	}
	return e.NewConversation(a)
}

// line is the preview's line about the conversation a run
// continues.
func (b *agentConvs) line(req agents.Request) string {
	if req.Resume == "" {
		return fmt.Sprintf("new %s conversation (nothing earlier is sent)", req.Agent)
	}
	turns := 0
	if c := b.m[req.Agent]; c != nil && c.ID == req.Resume {
		turns = c.Turns
	}
	return fmt.Sprintf("continues %s conversation %s (%s; /new %s starts afresh)", req.Agent, req.Resume, plural(turns, "turn"), req.Agent)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// text is /budget's account of the agents' conversations.
func (convs *agentConvs) text() string {
	var b strings.Builder
	b.WriteString("conversations (continued on every run of the agent; /new starts afresh):\n")
	for _, a := range []string{agents.Claude, agents.Codex} {
		c := convs.get(a)
		if c == nil {
			fmt.Fprintf(&b, "  %-6s none yet: the next run starts one\n", a)
			continue
		}
		size := "size unknown"
		if c.InputTokens > 0 {
			size = fmt.Sprintf("last run sent %d input tokens", c.InputTokens)
		}
		fmt.Fprintf(&b, "  %-6s %s: %s, %s\n", a, c.ID, plural(c.Turns, "turn"), size)
	}
	return b.String()
}

// ContinueConversations picks up the agents' conversations recorded in
// conversation.jsonl (the one-shot commands' --continue; chat --resume
// does it as part of Resume).
func (e *Engine) ContinueConversations() error {
	rs, err := resume.Read(e.LogPath(), 0)
	if err != nil {
		return err
	}
	e.convs.restore(rs)
	return nil
}

func (b *agentConvs) restore(rs *resume.State) {
	for a, c := range rs.Conversations {
		if b.m == nil {
			b.m = map[string]*AgentConversation{}
		}
		b.m[a] = &AgentConversation{ID: c.ID, Turns: c.Turns, InputTokens: c.InputTokens, Reported: c.Reported}
	}
}
