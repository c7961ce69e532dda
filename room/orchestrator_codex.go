package room

import (
	"fmt"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// This file is what the orchestrator lane says differently for a Codex
// session (a thread of a running codex process): its name, and its state,
// read from the rollout and the thread's writer lock.

// sessionLabel names a session for the room's lines: "Claude Code session"
// or "Codex session".
func sessionLabel(s *conversation.Session) string {
	if s != nil && s.IsCodex() {
		return "Codex session"
	}
	return "Claude Code session"
}

// codexSessionState says where a message sent now to a Codex session goes.
func codexSessionState(s *conversation.Session, now time.Time) string {
	q, _ := s.Queue()
	queue := fmt.Sprintf("%d queued", q.Depth)
	rollout := conversation.LocateTranscript(s)
	switch {
	case s.Busy(now) || conversation.CodexTurn(rollout, now):
		return "in a turn: a message is delivered when the turn ends (Stop hook); " + queue
	case conversation.CodexLoaded(s.ID):
		return "idle: a message is delivered at once (codex queue); " + queue
	}
	return "not loaded in a running codex: a message waits until the thread runs again (Stop hook, or codex queue once it is loaded); " + queue
}
