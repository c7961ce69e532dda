package room

import (
	"context"
	"io"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// This file is what a terminal front end (the REPL) gives the engine and
// takes from it; the engine itself never draws on a terminal.

// Notifier tells the person that a wait they may not be watching ended (a
// run, a chat reply): took is how long it was, text what ended.
type Notifier interface {
	Notify(took time.Duration, text string)
}

// SetNotifier sets who is told when a wait ends; nil tells no one.
func (e *Engine) SetNotifier(n Notifier) { e.notify = n }

// notifyEnd tells the notifier, if there is one, that a wait of took ended.
func (e *Engine) notifyEnd(took time.Duration, text string) {
	if e.notify != nil {
		e.notify.Notify(took, text)
	}
}

// SetOutput sends everything the engine prints to w from now on, wrapped
// to width() columns when width is not nil, and returns what restores the
// previous writer and width.
func (e *Engine) SetOutput(w io.Writer, width func() int) (restore func()) {
	e.out.mu.Lock()
	prev := e.out.w
	e.out.w = w
	e.out.mu.Unlock()
	if width != nil {
		e.out.setWidth(width)
	}
	return func() {
		if width != nil {
			e.out.setWidth(nil)
		}
		e.out.mu.Lock()
		e.out.w = prev
		e.out.mu.Unlock()
	}
}

// HoldOutput runs write while nothing else the engine prints can reach the
// terminal. With clear, an open line of agent text is ended and the
// thinking pulse erased first.
func (e *Engine) HoldOutput(clear bool, write func()) {
	e.out.mu.Lock()
	defer e.out.mu.Unlock()
	if clear {
		e.out.clearLocked()
	}
	write()
}

// Label is "[role]" in the role's colour, as the engine's lines begin.
func (e *Engine) Label(r events.Role) string { return e.out.label(r) }

// SayAs prints a line labelled with role r.
func (e *Engine) SayAs(r events.Role, format string, a ...any) { e.out.say(r, format, a...) }

// Print prints text as it is (ending an open line first), wrapped like the
// engine's lines.
func (e *Engine) Print(s string) { e.out.raw(s) }

// Getenv reads the environment the engine was configured with.
func (e *Engine) Getenv(name string) string { return e.getenv(name) }

// FollowReplies has chat replies the room stopped waiting for (Ctrl-C)
// followed in the background until ctx ends: each is handed to print when
// it comes (above the prompt) and logged once. The returned wait ends the
// followers' bookkeeping once ctx is done and they have returned.
func (e *Engine) FollowReplies(ctx context.Context, print func([]byte)) (wait func()) {
	return e.chat.FollowReplies(ctx, print)
}
