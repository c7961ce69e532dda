package repl

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/screens"
)

// Two screens, one conversation: while the room waits at its prompt it
// shows, above the prompt, the turns another screen (the page of
// relay-baton serve, a second terminal room, a one-shot command) appends
// to the conversation log, each labelled with where it came from
// ("page: ..."), written through readline so the line being typed is
// drawn again below them. What arrives while this room runs a command
// waits for the prompt. The pinned panel is drawn again when another
// screen's run takes or lets go of the repository ("held by").

// othersPoll is how often the room looks whether it is back at its
// prompt with turns to show, and whether the run lock changed hands.
const othersPoll = 100 * time.Millisecond

// othersShow is the room's follower of the other screens.
type othersShow struct {
	s    *session
	mu   sync.Mutex
	text []string // turns waiting for the prompt
	over int      // turns not kept (more than maxOthersWaiting waited)
	kick chan struct{}
}

// followOthers starts following the log; it ends with the room.
func (s *session) followOthers() {
	ctx, stop := context.WithCancel(s.ctx)
	o := &othersShow{s: s, kick: make(chan struct{}, 1)}
	wait := s.e.FollowOthers(ctx, func(ev screens.Other) {
		o.mu.Lock()
		if len(o.text) < maxOthersWaiting {
			o.text = append(o.text, ev.Text(s.o.Color)+"\n")
		} else {
			o.over++
		}
		o.mu.Unlock()
		select {
		case o.kick <- struct{}{}:
		default:
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.loop(ctx)
	}()
	s.onClose(func() {
		stop()
		wait()
		<-done
	})
}

// maxOthersWaiting bounds the turns kept while this room runs a command.
const maxOthersWaiting = 1000

// atPrompt reports whether the room waits for a line (not for an answer
// inside a command of its own).
func (s *session) atPrompt() bool {
	if !s.reading.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelTurn == nil
}

// loop prints the waiting turns whenever the room is at its prompt, and
// watches the run lock.
func (o *othersShow) loop(ctx context.Context) {
	s := o.s
	t := time.NewTicker(othersPoll)
	defer t.Stop()
	held := room.HeldKey(s.e.Root)
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.kick:
		case <-t.C:
		}
		if !s.atPrompt() {
			continue
		}
		shown := o.flush()
		if now := room.HeldKey(s.e.Root); now != held {
			held = now
			o.heldChanged()
			shown = true
		}
		if shown {
			s.pokePanel()
		}
	}
}

// flush prints the waiting turns above the prompt; it reports whether
// there were any.
func (o *othersShow) flush() bool {
	o.mu.Lock()
	text, over := o.text, o.over
	o.text, o.over = nil, 0
	o.mu.Unlock()
	if len(text) == 0 {
		return false
	}
	if over > 0 {
		text = append(text, fmt.Sprintf("%s %s more from other screens not shown here: relay-baton replay --since 10m lists them\n", o.s.e.Label(events.RoleRelayBaton), render.Count(over, "turn")))
	}
	b := []byte(strings.Join(text, ""))
	o.s.e.HoldOutput(true, func() { o.s.rl.Write(b) })
	return true
}

// heldChanged says, on a terminal without the pinned panel, that another
// screen's run took or let go of the repository (the pinned panel shows
// it in its "held by" row).
func (o *othersShow) heldChanged() {
	s := o.s
	if s.pin != nil && s.pin.Pinned() {
		return
	}
	line := "the repository is free: no agent run holds it"
	if h := room.RunHeldBy(s.e.Root); h != nil {
		line = "held by " + h.Text(time.Now()) + ": nothing here starts a run until it ends"
	}
	b := []byte(s.e.Label(events.RoleRelayBaton) + " " + line + "\n")
	s.e.HoldOutput(true, func() { s.rl.Write(b) })
}

// pokePanel has the pinned panel gather its facts again now.
func (s *session) pokePanel() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}
