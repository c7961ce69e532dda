package conversation

// NativeLaneNote says what of the lane (chat with a running session) does
// not work on this system, and what to use instead; "" where it all works.
func NativeLaneNote() string {
	return "chat with a running Claude Code or Codex session does not work on native Windows yet " +
		"(its hooks run through Git Bash and Claude Code's messaging socket is a named pipe, neither tested there): " +
		"messages can be queued and transcripts read, but nothing delivers them; run relay-baton inside WSL 2, " +
		"where the lane works as on Linux (see docs/platforms.md)"
}
