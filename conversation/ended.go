package conversation

import (
	"errors"
	"fmt"

	"github.com/relay-baton/relay-baton/procfacts"
)

// ProcessEnded reports whether the session's recorded process has ended
// (Check says Ended, as `targets` shows it). A session with no recorded
// process, or one whose process still runs, has not.
// A Codex thread whose TUI quit, held only by a codex app-server daemon,
// has ended too: nobody would see its answer.
func (s *Session) ProcessEnded(src procfacts.Source) bool {
	if s.codexTUIQuit() {
		return true
	}
	p, ok := s.Process()
	return ok && p.Check(src) == procfacts.Ended
}

// ResumeCommand is how the user starts session s again: `claude --resume
// <id>`, or `codex resume <id>` for a Codex thread.
func (s *Session) ResumeCommand() string {
	if s.IsCodex() {
		return "codex resume " + s.ID
	}
	return "claude --resume " + s.ID
}

// errCodexTUIQuit: the Codex thread is held only by an app-server daemon.
var errCodexTUIQuit = errors.New("no codex TUI shows the thread")

// EndedError is the refusal of a message to session s, whose process
// ended: the words `send` uses when no session runs, and the next step.
func EndedError(s *Session) error {
	if s.codexTUIQuit() {
		return fmt.Errorf("%w: thread %s: its TUI has quit, and a codex app-server daemon that still holds the thread would answer in a turn no terminal shows; nothing was queued: reopen it (`%s` in %s), then send again", errCodexTUIQuit, s.ID, s.ResumeCommand(), s.Workspace)
	}
	return fmt.Errorf("%w: session %s ended (its process exited); nothing was queued: start a session, or resume this one (`%s` in %s)", ErrNoLiveSession, s.ID, s.ResumeCommand(), s.Workspace)
}
