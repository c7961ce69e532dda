package room

import (
	"io"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/room/chatlane"
)

// The orchestrator lane is package chatlane's (the engine's e.chat): free
// text to a running session, /target, /targets, /cancel, /resend. This
// file is what the engine hands it and what the one-shot commands call.

// AgentOrchestrator is the active-agent name of the orchestrator lane.
const AgentOrchestrator = chatlane.AgentOrchestrator

// UseOrchestrator makes the orchestrator lane the active agent, talking to
// session target ("" = the workspace's lead).
func (e *Engine) UseOrchestrator(target string) error { return e.chat.Use(target) }

// laneScreen is the engine's printer as the lane renders a session's turn
// on it.
type laneScreen struct{ e *Engine }

func (s laneScreen) BeginRun(agent string)      { s.e.out.beginRun(agent) }
func (s laneScreen) EndPulse()                  { s.e.out.endPulse() }
func (s laneScreen) Activity(a events.Activity) { s.e.out.activity(a) }

// Terminal is a renderer to w with the printer's colour and width.
func (s laneScreen) Terminal(w io.Writer) *render.Terminal {
	p := s.e.out
	p.mu.Lock()
	defer p.mu.Unlock()
	t := render.NewTerminal(w, p.color)
	t.SetMarkdown(true)
	t.SetWidth(p.width)
	return t
}
