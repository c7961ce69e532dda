// Package claudecode is what relay-baton knows of Claude Code's running
// sessions from outside them: Claude Code's own registry of live sessions
// (`claude agents --json`, cached for RegistryTTL and remembered in the
// user's cache folder), the messaging socket a session binds (SocketPath)
// and the post of a user message to it (Post), where its transcripts are
// written (ProjectDir, FindTranscript), and what a transcript says of a
// message posted to a session's socket (EnqueuedInTranscript). Package
// conversation builds the lanes on it; it knows no chat folder.
package claudecode
