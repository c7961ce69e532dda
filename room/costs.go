package room

import (
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/resume"
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
func (b *agentConvs) previousReport(req agents.Request) *events.Usage {
	if req.Resume == "" {
		return nil
	}
	c := b.m[req.Agent]
	if c == nil || c.ID != req.Resume || c.Reported == (events.Usage{}) {
		return nil
	}
	r := c.Reported
	return &r
}

// Spent is what the agent runs of this room session cost, summed from
// each run's own usage; after a resume, the runs the log records too.
type Spent struct {
	resume.Costs
	// FromLog is how many of the runs were read back from the log by a
	// resume.
	FromLog int
}

// Text is /budget's line about the session's spending.
func (s Spent) Text() string {
	if s.Runs == 0 {
		return "spent this session: no agent run yet\n"
	}
	var b strings.Builder
	b.WriteString("spent this session: " + s.totalWords())
	if s.FromLog > 0 {
		fmt.Fprintf(&b, "; %s read back from the log", render.Count(s.FromLog, "run"))
	}
	b.WriteString("\n")
	return b.String()
}

// totalWords is the total in words: "$0.00042 over 3 runs (claude ...;
// codex ...)", or "no agent run yet".
func (s Spent) totalWords() string {
	if s.Runs == 0 {
		return "no agent run yet"
	}
	w := render.UsageWords(s.Total) + " over " + plural(s.Runs, "run")
	var per []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		if u, ok := s.ByAgent[a]; ok {
			per = append(per, a+" "+render.UsageWords(u))
		}
	}
	if len(per) > 1 {
		w += " (" + strings.Join(per, "; ") + ")"
	}
	return w
}
