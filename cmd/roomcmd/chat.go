package roomcmd

import (
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/repl"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room"
)

// Chat is its command's row of the table (usage, help) and its Run.
var Chat = &cli.Command{
	Entry: cli.Entry{Name: "chat", Aliases: []string{"room"}, Usage: "[--path DIR] [--agent claude|codex|orchestrator] [--diet PROFILE] [--resume [--recap N]] [--in-place] [--yes] [--allow-api-key-env] [--allow-env NAME]...", Short: "Open the Agent Room: a turn-based REPL with Claude and Codex"},
	Long: `Slash commands (/help lists them) plan, execute, loop, review and hand off; free text asks
the active agent a read-only question. Every agent run is previewed (argv, cwd, policy,
credentials held back) and runs only after you answer y. /agent orchestrator chats with a running
Claude Code session of the workspace instead (after 'relay-baton hook install'): free text is
previewed, queued in its inbox and its reply shown inline. Ctrl-C cancels a running agent
(or stops waiting for a reply); Ctrl-C twice on an empty prompt, Ctrl-D or /exit leaves.

--resume rebuilds the room from .ai-session/conversation.jsonl (active agent, plan and its
age, orchestrator target, an unfinished /continue loop, chat messages still waiting) and
recaps the last turns, and each agent continues its conversation (claude's session,
codex's thread) from where it was; /new starts afresh. Each agent keeps one conversation
for the whole room session: a follow-up question reaches it with the earlier turns.

Input: a paste (bracketed paste) is one message, however many lines; end a line with \ or
press Alt-Enter to type a newline. A confirmation counts only a key pressed after its
preview is shown; with stdin not a terminal, no agent runs unless --yes is given.

On a terminal of 100 columns or more the context panel is pinned to the bottom rows and
redrawn in place; narrower terminals and pipes get a one-line status before each prompt.`,
	Run: runChat,
}

func runChat(inv *cli.Invocation) error {
	var f Flags
	fs := inv.Flags()
	f.Define(fs, false, false)
	fs.StringVar(&f.Agent, "agent", "claude", "the active agent at start: claude, codex or orchestrator (the workspace's lead Claude Code session)")
	defineAllowEnv(fs, &f)
	defineInPlace(fs, &f)
	fs.BoolVarP(&f.Yes, "yes", "y", false, "confirm every preview without asking (without it, a room whose stdin is not a terminal runs no agent)")
	resumeLog := fs.Bool("resume", false, "rebuild the room's state from .ai-session/conversation.jsonl and recap the last turns")
	recap := fs.Int("recap", resume.DefaultRecap, fmt.Sprintf("with --resume: how many turns to recap (1 to %d)", resume.MaxRecap))
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("chat takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	if *recap < 1 || *recap > resume.MaxRecap {
		return cli.Usagef("--recap must be from 1 to %d, not %d", resume.MaxRecap, *recap)
	}
	if *resumeLog && fs.Changed("agent") {
		return cli.Usagef("--resume restores the active agent from the log; drop --agent (or switch with /agent after resuming)")
	}
	orchestrator := strings.EqualFold(f.Agent, room.AgentOrchestrator)
	if !orchestrator && f.Agent != "claude" && f.Agent != "codex" {
		return &cli.UsageError{Msg: "unknown agent \"" + f.Agent + "\": choose claude, codex or orchestrator", Hint: "relay-baton chat --help"}
	}
	if orchestrator {
		f.Agent = ""
	}
	e, err := OpenEngine(inv, &f, true)
	if err != nil {
		return err
	}
	defer e.Close()
	if orchestrator {
		if err := e.UseOrchestrator(""); err != nil {
			return err
		}
	}
	e.SetTerminal(nil)
	// Ctrl-C belongs to the room (it cancels a running agent); SIGTERM and
	// SIGHUP end it.
	ctx, stop := cli.KeepInterrupt(inv.Ctx)
	defer stop()
	return repl.Run(ctx, e, repl.Options{In: inv.IO.In, Out: inv.IO.Out, Err: inv.IO.Err, Terminal: inv.IO.InTTY, Color: inv.IO.Color,
		OutTerminal: inv.IO.OutTTY, Resume: *resumeLog, Recap: *recap})
}
