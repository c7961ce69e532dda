package room

import (
	"context"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// RunCost is what one agent run of the room session cost (its own usage).
type RunCost struct {
	Agent   string
	Command string
	Usage   events.Usage
}

// addRun counts one run's own usage into the session's totals and keeps
// it for /costs.
func (s *Spent) addRun(agent, command string, u events.Usage) {
	s.add(agent, u)
	s.Each = append(s.Each, RunCost{Agent: agent, Command: command, Usage: u})
}

// costsListed is how many of the session's latest runs /costs lists.
const costsListed = 20

// CostsText is /costs: each run of this room session with what it cost
// (the latest costsListed), then the session's totals.
func (s Spent) CostsText() string {
	if len(s.Each) == 0 {
		return s.Text()
	}
	var b strings.Builder
	from := max(0, len(s.Each)-costsListed)
	if from > 0 {
		fmt.Fprintf(&b, "(%s not listed)\n", render.Count(from, "earlier run"))
	}
	for i, r := range s.Each[from:] {
		fmt.Fprintf(&b, "%d. %s /%s: %s\n", from+i+1, r.Agent, r.Command, usageWords(r.Usage))
	}
	return b.String() + s.Text()
}

func (e *Engine) cmdCosts(_ context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/costs takes no arguments (it lists this session's runs and what they cost)")
	}
	e.Say("%s", strings.TrimRight(e.spent.CostsText(), "\n"))
	return nil
}
