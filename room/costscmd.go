package room

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/resume"
)

// RunCost is what one agent run of the room session cost (its own usage).
type RunCost = resume.RunCost

// addRun counts one run's own usage into the session's totals and keeps
// it for /costs.
func (s *Spent) addRun(agent, command string, at time.Time, u events.Usage) {
	s.Add(RunCost{Agent: agent, Command: command, At: at, Usage: u}, costsListed)
}

// costsListed is how many of the session's latest runs /costs lists.
const costsListed = resume.LatestCosts

// CostsText is /costs: each run of this room session with what it cost
// (the latest costsListed), then the session's totals.
func (s Spent) CostsText() string {
	if len(s.Latest) == 0 {
		return s.Text()
	}
	var b strings.Builder
	from := s.Earlier()
	if from > 0 {
		fmt.Fprintf(&b, "(%s not listed)\n", render.Count(from, "earlier run"))
	}
	for i, r := range s.Latest {
		b.WriteString(costLine(from+i+1, r) + "\n")
	}
	return b.String() + s.Text()
}

func cmdCosts(e *Engine, _ context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/costs takes no arguments (it lists this session's runs and what they cost)")
	}
	e.Say("%s", strings.TrimRight(e.spent.CostsText(), "\n"))
	return nil
}

// costLine is /costs's line for the n-th run of the session.
func costLine(n int, r RunCost) string {
	return fmt.Sprintf("%d. %s /%s: %s", n, r.Agent, r.Command, render.UsageWords(r.Usage))
}
