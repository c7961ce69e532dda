package room

import (
	"context"
	"sync"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/screens"
)

// Two screens, one conversation: every screen appends to the same
// conversation.jsonl, and a terminal room follows it from where it
// started to show, above its prompt, the turns another process appended
// (package screens: an event is another screen's when its sessionId is not
// this engine's; each screen names itself for the labels). What those
// turns changed becomes this room's too, between its turns (AdoptOthers).

// others is what the follower hands the engine's goroutine: the events
// of other screens not yet adopted (AdoptOthers).
type others struct {
	mu      sync.Mutex
	pending []events.Event
}

// othersOf holds the queue of each engine that follows the log (an
// engine hosts at most one follower), from FollowOthers until its
// follower ends.
var othersOf sync.Map // *Engine → *others

// FollowOthers follows the conversation log from its end now and hands fn,
// in order and once each, every event another process appends (a page, a
// second terminal room, a one-shot command), until ctx ends; this
// engine's own events are never handed. fn is called from one goroutine.
// The events are also kept for AdoptOthers, which the caller runs where
// the engine is its own (between turns). It records this engine's screen
// as a terminal room's. The returned wait returns once the follower has
// ended (after ctx).
func (e *Engine) FollowOthers(ctx context.Context, fn func(screens.Other)) (wait func()) {
	path := e.LogPath()
	if e.log == nil || path == "" {
		return func() {}
	}
	forget := screens.Announce(e.SessionDir, e.SessionID, screens.Room, e.lock.Screen())
	from := screens.CompleteEnd(path)
	q := &others{}
	othersOf.Store(e, q)
	kinds := map[string]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer othersOf.Delete(e)
		defer forget()
		_ = screens.Follow(ctx, path, from, e.SessionID, func(ev events.Event) {
			s, ok := kinds[ev.SessionID]
			if !ok {
				// A writer without a record is looked for again at its
				// next event (its record may come later).
				if s = screens.KindOf(e.SessionDir, ev.SessionID); s != "" {
					if len(kinds) >= 256 {
						clear(kinds)
					}
					kinds[ev.SessionID] = s
				}
			}
			q.mu.Lock()
			if len(q.pending) < maxPendingOthers {
				q.pending = append(q.pending, ev)
			}
			q.mu.Unlock()
			fn(screens.Other{Event: ev, Screen: s})
		})
	}()
	return func() { <-done }
}

// maxPendingOthers bounds the events kept for AdoptOthers between two
// turns (a runaway writer does not grow the room without end).
const maxPendingOthers = 4096

// AdoptOthers takes into the engine what other screens' turns changed
// since the last call: the last run (/status, the panel), what runs cost
// (/costs, /budget), the agents' conversations (the next run of an agent
// continues the conversation another screen's run continued, and a /new
// there forgets it here), and the executor's pending run (adoptRun). It does not switch the active agent:
// the prompt names the agent a typed line goes to, and only the person at
// this screen changes it. Call it where the engine is not running a
// command (before one, or from the prompt's panel).
func (e *Engine) AdoptOthers() {
	v, ok := othersOf.Load(e)
	if !ok {
		return
	}
	q := v.(*others)
	q.mu.Lock()
	evs := q.pending
	q.pending = nil
	q.mu.Unlock()
	work := false
	var made []string // runs another screen's executor left pending, newest last
	for i := range evs {
		ev := &evs[i]
		adoptOther(e, ev)
		switch ev.Kind {
		case events.KindChanges:
			work = true
			if m, err := events.MetaOf[events.ChangesMeta](ev); err == nil && m.Run != "" && !m.Apply && !m.Discard && !m.Undo {
				made = append(made, m.Run)
			}
		case events.KindCommand:
			work = true // an /apply or an /undo may have been there
		}
	}
	if work {
		e.wt.Adopt(context.Background(), made)
	}
}

// adoptOther is AdoptOthers for one event.
func adoptOther(e *Engine, ev *events.Event) {
	switch ev.Kind {
	case events.KindAgentRun:
		r := resume.NewReader()
		if r.Take(*ev) != nil {
			return
		}
		rs := r.State()
		if rs.LastRun == nil {
			return // it did not run
		}
		e.last = rs.LastRun
		for _, c := range rs.Costs.Latest {
			e.spent.Costs.Add(c, resume.LatestCosts)
		}
		if c, ok := rs.Conversations[rs.LastRun.Agent]; ok {
			if e.convs.m == nil {
				e.convs.m = map[string]*AgentConversation{}
			}
			e.convs.m[rs.LastRun.Agent] = &AgentConversation{ID: c.ID, Turns: c.Turns, InputTokens: c.InputTokens, Reported: c.Reported}
		}
	case events.KindStatus:
		m, err := events.MetaOf[events.StatusMeta](ev)
		if err == nil && (m.NewConversation == agents.Claude || m.NewConversation == agents.Codex) {
			delete(e.convs.m, m.NewConversation)
		}
	}
}

// HeldKey is a token that changes when the repository's run lock changes
// hands ("" when no run holds it); for a screen that redraws its panel
// then.
func HeldKey(root string) string { return RunHeldBy(root).Key() }
