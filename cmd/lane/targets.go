package lane

import (
	"fmt"
	"time"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/workspace"
)

// Targets is its command's row of the table (usage, help) and its Run.
var Targets = &cli.Command{
	Entry: cli.Entry{Name: "targets", Usage: "[--all] [--everywhere] [--json] [--set-lead ID|none]", Short: "List the Claude Code and Codex sessions in this workspace that can be chatted with"},
	Long: `Lists the running Claude Code sessions of this workspace, most recently
active first: those Claude Code's own list names (claude agents --json, run
as RELAY_BATON_CLAUDE or claude on PATH; no hooks needed: relay-baton reaches
them through their messaging socket) and those relay-baton's hooks registered,
one row per session. A missing or older claude leaves the hooks' sessions, with
a note saying why. --everywhere lists every session Claude Code names, in any
folder. For each: whether it is chat-capable (its inbox exists, or its socket), its
queue depth and oldest message age, whether it is in a turn (busy) and whether
an idle-lane waiter is armed, its last activity and transcript path. Codex
threads (AGENT codex) whose rollout cwd is in the workspace are listed too:
running while a codex process holds the thread, busy from the rollout, "idle
(codex queue)" when the queue lane reaches it, the rollout as the transcript.

One-shot 'claude -p' runs (relay-baton's own agent runs among them) are never
targets: the hooks leave them alone. --all also lists the sessions that have
ended and those whose process is unknown (a transcript only, or registered by
an older relay-baton), with their state.

The lead (marked *) is the one 'send' uses by default: the running session
marked with --set-lead, else the most recently active running one. There is
no lead while no session runs. When a newer session takes the lead, send and
the room's /agent orchestrator say so ("lead is now ...").`,
	Run: runTargets,
}

func runTargets(inv *cli.Invocation) error {
	fs := inv.Flags()
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "also list sessions that ended or whose process is unknown")
	everywhere := fs.Bool("everywhere", false, "list every running Claude Code session Claude Code knows (claude agents --json), whatever its folder")
	setLead := fs.String("set-lead", "", "mark session ID as the lead (\"none\" clears the mark)")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if *everywhere {
		return claudecode.WriteEverywhere(inv.Ctx, inv.IO.Out, time.Now())
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	if *setLead != "" {
		id := *setLead
		if id == "none" {
			id = ""
		} else if id, err = sessionUsage(view.PickSession(inv.Ctx, ws, id)); err != nil {
			return err
		}
		running, err := view.MarkLead(ws, id)
		if err != nil {
			return &cli.UsageError{Msg: err.Error(), Hint: "relay-baton targets"}
		}
		if !running {
			fmt.Fprintf(inv.IO.Err, "relay-baton: note: session %s is not running in %s; it becomes the lead while it runs with the hooks installed (until then the most recently active running one is)\n", id, ws)
		}
	}
	warnPlanted(inv, ws)
	if note := conversation.NativeLaneNote(); note != "" {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %s\n", note)
	}
	ts, err := conversation.ListTargetsContext(inv.Ctx, ws, *all)
	if err != nil {
		return err
	}
	if err := inv.Ctx.Err(); err != nil {
		return err // Ctrl-C while Claude Code's registry was read: the list is not whole
	}
	if *asJSON {
		if ts == nil {
			ts = []conversation.Target{}
		}
		return inv.PrintJSON(ts)
	}
	return view.TargetsReport(inv.IO.Out, ws, ts, *all, time.Now())
}
