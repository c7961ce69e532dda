package room

import (
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// What a run cost. The CLIs report usage in their own way, measured with
// the pinned versions against the mocks: claude's result line carries the
// run's own token counts but total_cost_usd is the running total of the
// session it resumed ($0.00014, then $0.00028 for two identical runs);
// codex's turn.completed carries the running token totals of the thread
// it resumed (10, then 20 input tokens) and no cost. A run's own usage is
// the difference from what the conversation's previous run reported.

// runUsage is the run's own usage from what the CLI reported, given what
// the previous run of the same conversation reported (nil: a new
// conversation, whose totals are the run's own). A total that went down
// (a CLI that counts differently) is taken as the run's own.
func runUsage(agent string, reported events.Usage, prev *events.Usage) events.Usage {
	own := reported
	if prev == nil {
		return own
	}
	switch agent {
	case agents.Claude:
		if reported.CostUSD >= prev.CostUSD {
			own.CostUSD = reported.CostUSD - prev.CostUSD
		}
	case agents.Codex:
		if reported.InputTokens >= prev.InputTokens && reported.CachedInputTokens >= prev.CachedInputTokens &&
			reported.OutputTokens >= prev.OutputTokens && reported.ReasoningTokens >= prev.ReasoningTokens {
			own.InputTokens -= prev.InputTokens
			own.CachedInputTokens -= prev.CachedInputTokens
			own.OutputTokens -= prev.OutputTokens
			own.ReasoningTokens -= prev.ReasoningTokens
		}
	}
	return own
}

// previousReport is what the conversation a request continues reported
// last, nil for a new conversation (or one the room knows no report of).
func (e *Engine) previousReport(req agents.Request) *events.Usage {
	if req.Resume == "" {
		return nil
	}
	c := e.convs[req.Agent]
	if c == nil || c.ID != req.Resume || c.Reported == (events.Usage{}) {
		return nil
	}
	r := c.Reported
	return &r
}

// Spent is what the agent runs of this room session cost, summed from
// each run's own usage.
type Spent struct {
	Runs    int          `json:"runs"`
	Usage   events.Usage `json:"usage"`
	ByAgent map[string]events.Usage
	Each    []RunCost `json:"-"` // each run, in order (addRun)
}

func (s *Spent) add(agent string, u events.Usage) {
	s.Runs++
	s.Usage = addUsage(s.Usage, u)
	if s.ByAgent == nil {
		s.ByAgent = map[string]events.Usage{}
	}
	s.ByAgent[agent] = addUsage(s.ByAgent[agent], u)
}

func addUsage(a, b events.Usage) events.Usage {
	return events.Usage{InputTokens: a.InputTokens + b.InputTokens, CachedInputTokens: a.CachedInputTokens + b.CachedInputTokens,
		OutputTokens: a.OutputTokens + b.OutputTokens, ReasoningTokens: a.ReasoningTokens + b.ReasoningTokens, CostUSD: a.CostUSD + b.CostUSD}
}

// Text is /budget's line about the session's spending.
func (s Spent) Text() string {
	if s.Runs == 0 {
		return "spent this session: no agent run yet\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "spent this session: %s over %s", usageWords(s.Usage), plural(s.Runs, "run"))
	var per []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		if u, ok := s.ByAgent[a]; ok {
			per = append(per, a+" "+usageWords(u))
		}
	}
	if len(per) > 1 {
		fmt.Fprintf(&b, " (%s)", strings.Join(per, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

// usageWords is "$0.00042, 30 in / 15 out tokens" (the cost when one was
// reported).
func usageWords(u events.Usage) string {
	t := fmt.Sprintf("%d in / %d out tokens", u.InputTokens+u.CachedInputTokens, u.OutputTokens)
	if u.CostUSD > 0 {
		return render.Money(u.CostUSD) + ", " + t
	}
	return t
}
