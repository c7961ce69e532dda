// Package chatlane is the room's client of the orchestrator lane, terminal-
// free: free text becomes a chat message for an already-running Claude
// Code or Codex session of the workspace, previewed and confirmed through
// the room's one preview loop, queued in the session's file inbox
// (conversation.Send) and delivered by a lane of package conversation;
// the Lane then follows the delivery and streams the session's reply
// (conversation.Follow), in the foreground or, after Ctrl-C, in the
// background (FollowReplies). /target, /targets, /cancel and /resend are
// its. The engine (package room) hands it what it needs as Deps: a writer,
// the event log, the preview loop and where a turn is rendered.
package chatlane
