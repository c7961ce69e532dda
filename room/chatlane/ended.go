package chatlane

import (
	"fmt"

	"github.com/relay-baton/relay-baton/conversation"
)

// sessionEndedText says what became of message id when session s ended
// while the room waited for it, and what to do next.
func sessionEndedText(s *conversation.Session, id string, res conversation.FollowResult) string {
	next := fmt.Sprintf("it is delivered when the session runs again (`%s`); /cancel removes it, /agent orchestrator or /target <id> picks a running session", s.ResumeCommand())
	switch st := res.State; {
	case res.StateErr == nil && st.Queued:
		return fmt.Sprintf("the session ended; the message stays queued (message %s, %d ahead): %s.", id, st.Ahead, next)
	case res.StateErr == nil && st.Delivered != nil:
		return fmt.Sprintf("the session ended before it answered message %s (delivered%s); its transcript keeps what it wrote (relay-baton tail --session %s).", id, deliveredWhen(st.Delivered), s.ID)
	}
	return fmt.Sprintf("the session ended while message %s was on its way: /targets lists the running sessions.", id)
}
