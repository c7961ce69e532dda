package room

import (
	"context"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/panel"
	"github.com/relay-baton/relay-baton/room/repofacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// orchestratorTarget is the orchestrator session the room talks to, ""
// when none.
func (e *Engine) orchestratorTarget() string {
	if e.chat.Session != "" {
		return e.chat.Session
	}
	return e.cont.target
}

// Panel gathers the context panel's facts: plan.md, the queue, and the
// git facts (changed files, diff and repo map sizes) from e.repo, which
// refreshes them in the background when they are out of date: a prompt
// does not wait for a walk of a large repository (see repofacts.Cache.Get).
// Nothing is logged.
func (e *Engine) Panel(ctx context.Context) panel.Facts {
	p := panel.Facts{Active: e.Active, Mode: "agents", Diet: e.Diet, Last: e.last, Changed: -1, SessionCostUSD: e.spent.Total.CostUSD, Pending: e.wt.PendingLine()}
	if e.Active == "orchestrator" {
		p.Mode = "orchestrator"
	}
	if h := e.lock.HeldElsewhere(); h != nil {
		p.Held = h.Text(e.now())
	}
	if age, ok := e.planMD.age(); ok {
		p.Plan, p.PlanAge = true, age
		if text, err := e.planMD.read(); err == nil {
			p.PlanMissing = missingSections(text)
		}
	}
	if e.repo == nil {
		e.repo = repofacts.New(e.Root) // an engine not made by New: a cache of its own
	}
	f, pending, fresh := e.repo.Get(ctx, e.last)
	p.Changed, p.GitPending = f.Changed, pending
	if pending {
		p.Changed = -1
	} else if !fresh {
		p.GitAge = max(time.Since(f.At), time.Millisecond)
	}
	p.Ratio = budgetOf(e.Diet, e.SessionDir, f.DiffChars, f.MapChars).Ratio
	if p.Last != nil {
		p.LastAgo = max(0, e.now().Sub(p.Last.At))
	}
	if t := e.orchestratorTarget(); t != "" {
		p.Target = t
		ws, err := workspace.Resolve(e.Root)
		if err != nil {
			ws = e.Root
		}
		if s, err := conversation.OpenSession(ws, t); err == nil {
			if q, err := s.Queue(); err == nil {
				p.QueueDepth, p.QueueAge = q.Depth, q.Age(e.now())
			}
			if a, ok := s.NeedsUser(conversation.LocateTranscript(s)); ok {
				p.NeedsUser = a.What()
			}
		}
	}
	return p
}
