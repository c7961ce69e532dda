package lane

import (
	"errors"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/hook"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/workspace"
)

// Hook is its command's row of the table (usage, help) and its Run.
var Hook = &cli.Command{
	Entry:       cli.Entry{Name: "hook", Usage: strings.Join(hookNames(), "|") + " [flags]", Short: "Claude Code hooks that deliver chat messages"},
	Long:        hookHelp(),
	Subcommands: hookNames(),
	Dispatch:    true,
	Run:         runHook,
}

func runHook(inv *cli.Invocation) error {
	subInv, err := inv.Subcommand(HookSubcommands)
	if err != nil {
		return err
	}
	sub := strings.TrimPrefix(subInv.Cmd.Name, "hook ")
	if sub == "install" {
		return hookInstall(subInv)
	}
	fs := subInv.Flags()
	timeout := fs.Duration("timeout", hook.DefaultWaiterTimeout, "give up (exit 0, nothing claimed) after this long; keep it under the hook's timeout")
	if sub != "wait" {
		fs = subInv.Flags() // the other hooks take no flag
	}
	if err := subInv.Parse(fs); err != nil {
		// Exit 2 from an asyncRewake hook wakes the session with stderr as
		// a message: a bad flag must not reach the model. Exit 1 instead.
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s (try: relay-baton hook %s --help)", ue.Msg, sub)}
		}
		return err
	}
	woke, failed := hook.Run(inv.Ctx, sub, inv.IO.In, inv.IO.Out, inv.IO.Err, *timeout)
	switch {
	case woke:
		return &cli.ExitError{Code: 2}
	case failed != nil:
		// Exit 1, not 2: a non-blocking error Claude Code shows, not text
		// for the model.
		return &cli.ExitError{Code: 1, Err: failed}
	}
	return nil
}

func hookInstall(inv *cli.Invocation) error {
	fs := inv.Flags()
	scope := fs.String("scope", "project", "where: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	check := fs.Bool("check", false, "only report whether the hooks are installed and current (exit 1 if not)")
	uninstall := fs.Bool("uninstall", false, "remove relay-baton's hooks")
	waitTimeout := fs.Duration("wait-timeout", hook.DefaultWaitTimeout, "how long the idle-lane waiter stays armed after each turn (a claude -p stream-json session waits for it when its stdin closes)")
	agent := fs.String("agent", "claude", "claude (Claude Code settings) or codex (Codex hooks.json, default --scope user, plus Codex's hook trust)")
	form := fs.String("form", hookinstall.FormAuto, "Claude Code's hooks: exec (run without a shell; Claude Code 2.1.139 or later), shell (sh -c), or auto: exec when the claude on PATH (or $RELAY_BATON_CLAUDE) is new enough")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	if !fs.Changed("scope") {
		*scope = "" // the agent's default
	}
	if note := conversation.NativeLaneNote(); note != "" && !*check && !*uninstall {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("hook install: %s; nothing was installed (--check and --uninstall still work here)", note)}
	}
	current, err := hookinstall.Install(inv.Ctx, inv.IO.Out, hookinstall.Options{Agent: *agent,
		Workspace: ws, Scope: *scope, WaitTimeout: *waitTimeout, Check: *check, Uninstall: *uninstall, Form: *form})
	var ue *hookinstall.UsageError
	switch {
	case errors.As(err, &ue):
		return &cli.UsageError{Msg: ue.Msg, Hint: ue.Hint}
	case err != nil:
		return err
	case !current:
		return cli.ErrSilent // missing, out of date or untrusted (said)
	}
	return nil
}

// HookSubcommands are the rows of `relay-baton hook`, the one place their
// usage and help are kept (the hook command's help and each subcommand's
// --help are built from them); the first five are run by Claude Code with
// a JSON payload on stdin.
var HookSubcommands = []*cli.Command{
	{Entry: cli.Entry{Name: "stop", Short: "Stop hook: reads the payload on stdin; stores the turn's last text (last_assistant_message) as the reply to the chat messages it answered (outbox/<id>.json); posts queued messages to the session's messaging socket when it has one, else claims one and prints {\"decision\":\"block\",\"reason\":...}; silent when none is queued or stop_hook_active is true."}},
	{Entry: cli.Entry{Name: "wait", Usage: "[--timeout D]", Short: "asyncRewake waiter (Stop and SessionStart hooks): reads the payload on stdin, waits while the session is idle for a chat message, claims it and exits 2 with its framed text on stderr; exits 0 with nothing claimed after --timeout or when another waiter is armed."}},
	{Entry: cli.Entry{Name: "prompt-submit", Short: "UserPromptSubmit hook: marks the session busy, so the idle lanes wait for the turn boundary; records the session's messaging socket and permission mode, and the chat messages the prompt carries."}},
	{Entry: cli.Entry{Name: "notify", Short: "Notification hook: records that the session waits for its user (a permission prompt or a question), shown by targets, the room and the page until the session moves on."}},
	{Entry: cli.Entry{Name: "session-start", Short: "SessionStart hook: records the session's transcript path and cwd (and its messaging socket, when Claude Code gives one) and creates its inbox."}},
	{Entry: cli.Entry{Name: "install", Usage: "[--agent claude|codex] [--scope project|local|user] [--wait-timeout D] [--check] [--uninstall]", Short: "Merge relay-baton's chat hooks into a Claude Code settings file; with\n--agent codex, into Codex's hooks.json (--scope user: $CODEX_HOME, the\ndefault; project: .codex/), recording the trust Codex needs for\nrelay-baton's hooks only (--check asks Codex too). The file is edited in\nplace (everything else kept byte for byte) after a backup to\n<file>.relay-baton.bak; a symlinked file stays a link (its target is\nedited); --uninstall removes only relay-baton's exact entries."}},
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
