package chatlane

import (
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

// targetLabel is sessionLabel for a listed target.
func targetLabel(t conversation.Target) string {
	if t.Agent == conversation.AgentCodex {
		return "Codex session"
	}
	return "Claude Code session"
}
