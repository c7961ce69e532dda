package cli

import (
	"fmt"
	"strings"
)

// HookSubcommands are the rows of `relay-baton hook`, the one place their
// usage and help are kept (the hook command's help and each subcommand's
// --help are built from them); the first five are run by Claude Code with
// a JSON payload on stdin.
var HookSubcommands = []*Command{
	{Entry: Entry{Name: "stop", Short: "Stop hook: reads the payload on stdin; stores the turn's last text (last_assistant_message) as the reply to the chat messages it answered (outbox/<id>.json); posts queued messages to the session's messaging socket when it has one, else claims one and prints {\"decision\":\"block\",\"reason\":...}; silent when none is queued or stop_hook_active is true."}},
	{Entry: Entry{Name: "wait", Usage: "[--timeout D]", Short: "asyncRewake waiter (Stop and SessionStart hooks): reads the payload on stdin, waits while the session is idle for a chat message, claims it and exits 2 with its framed text on stderr; exits 0 with nothing claimed after --timeout or when another waiter is armed."}},
	{Entry: Entry{Name: "prompt-submit", Short: "UserPromptSubmit hook: marks the session busy, so the idle lanes wait for the turn boundary; records the session's messaging socket and permission mode, and the chat messages the prompt carries."}},
	{Entry: Entry{Name: "notify", Short: "Notification hook: records that the session waits for its user (a permission prompt or a question), shown by targets, the room and the page until the session moves on."}},
	{Entry: Entry{Name: "session-start", Short: "SessionStart hook: records the session's transcript path and cwd (and its messaging socket, when Claude Code gives one) and creates its inbox."}},
	{Entry: Entry{Name: "install", Usage: "[--agent claude|codex] [--scope project|local|user] [--wait-timeout D] [--check] [--uninstall]", Short: "Merge relay-baton's chat hooks into a Claude Code settings file; with\n--agent codex, into Codex's hooks.json (--scope user: $CODEX_HOME, the\ndefault; project: .codex/), recording the trust Codex needs for\nrelay-baton's hooks only (--check asks Codex too). The file is edited in\nplace (everything else kept byte for byte) after a backup to\n<file>.relay-baton.bak; a symlinked file stays a link (its target is\nedited); --uninstall removes only relay-baton's exact entries."}},
}

// hookNames are the hook subcommands' names.
func hookNames() []string {
	var out []string
	for _, h := range HookSubcommands {
		out = append(out, h.Name)
	}
	return out
}

// hookHelp is the hook command's help text, from HookSubcommands.
func hookHelp() string {
	var b strings.Builder
	b.WriteString("Subcommands (the first five are run by Claude Code with a JSON payload on stdin):\n")
	for _, h := range HookSubcommands {
		fmt.Fprintf(&b, "  %s\n", h.Synopsis())
		for _, l := range strings.Split(h.Short, "\n") {
			fmt.Fprintf(&b, "      %s\n", l)
		}
	}
	b.WriteString(`
The hooks never print errors toward Claude Code: they record them in
.claude/session-chat/<sessionId>/errors.log. The one exception is a chat
message that is waiting but cannot be claimed (a full disk): stop says so
on stderr and exits 1, which Claude Code shows as the hook's error, and the
message stays queued. Each one serves its own
hook_event_name only (another event claims nothing), finishes well within its
timeout, and a claim it cannot finish (killed) is delivered again by the next
lane.

They serve the interactive TUI and 'claude -p --input-format stream-json'. For a
one-shot 'claude -p' (also with --resume) and for relay-baton's own agent runs
(RELAY_BATON_AGENT_RUN=1) every hook returns at once and registers nothing:
such a session cannot be woken, and a waiter would stall it.`)
	return b.String()
}
