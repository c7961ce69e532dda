package lane

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/workspace"
)

// Wait is its command's row of the table (usage, help) and its Run.
var Wait = &cli.Command{
	Entry: cli.Entry{Name: "wait", Usage: "--session ID [--once]", Short: "Block until a chat message arrives, claim it and print it (Monitor lane)"},
	Long: `The Monitor lane: a session arms Claude Code's Monitor tool on this command.
It watches the inbox (fsnotify), claims each message while the session is not in
a turn, and prints its framed text as one write. --once exits after the first
message. Claiming is by rename, so it is safe beside the hooks. When its
output is closed (nobody reads it), the message goes back to the inbox and
wait exits 1.`,
	Run: runWait,
}

func runWait(inv *cli.Invocation) error {
	fs := inv.Flags()
	session := fs.String("session", "", "the session id, or a unique prefix of 8+ hex digits")
	once := fs.Bool("once", false, "exit after the first message")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if *session == "" {
		return &cli.UsageError{Msg: "wait needs --session ID", Hint: "relay-baton targets"}
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	id, err := sessionUsage(view.PickSession(inv.Ctx, ws, *session)) // --session is given: resolved, never the lead
	if err != nil {
		return err
	}
	s, err := conversation.OpenSession(ws, id)
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	if !s.ChatCapable() {
		return fmt.Errorf("session %s: %w", id, conversation.ErrNotChatReady)
	}
	// A reader that is gone must show as a failed write (the message goes
	// back to the inbox), not kill the process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	// Sanitized when a person reads it rather than the Monitor tool.
	return s.Monitor(inv.Ctx, *once, inv.IO.OutTTY, inv.IO.Out, inv.IO.Err)
}
