// Command relay-baton lets one person direct AI coding agents by turns:
// Claude Code plans and reviews, Codex executes, each as a subprocess of its
// own CLI, and every turn is logged to .ai-session/conversation.jsonl. It can
// also chat with an already-running Claude Code session through a file inbox
// delivered by hooks.
//
// main lists the command table: package cli is the framework (the table
// as data, dispatch, help, completion and the exit codes); each command
// lives in a package of its own under cmd/ (its row of help, its flags and
// its Run: flags, one call into room, conversation or server, then render).
// The orchestrator lane's logic (hooks, lanes, follow, targets, hook
// install) is conversation's.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/cmd/lane"
	"github.com/relay-baton/relay-baton/cmd/replaycmd"
	"github.com/relay-baton/relay-baton/cmd/roomcmd"
	"github.com/relay-baton/relay-baton/cmd/runscmd"
	"github.com/relay-baton/relay-baton/cmd/selftestcmd"
	"github.com/relay-baton/relay-baton/cmd/serve"
	"github.com/relay-baton/relay-baton/cmd/trust"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/workspace"
)

// table is relay-baton's command line, in the order --help lists it: each
// row is its command's package's (cmd/...), holding its help, flags and
// Run; version, completion and help are cli's own.
var table = &cli.Table{
	Suggest: func(word string, names []string) string { return cli.DidYouMean("", cli.Suggest(word, names)) },
	Commands: []*cli.Command{roomcmd.Chat, replaycmd.Replay, roomcmd.Plan, roomcmd.Execute, roomcmd.Continue, roomcmd.Handoff,
		runscmd.Diff, runscmd.Apply, runscmd.Undo, runscmd.Runs, roomcmd.Review, roomcmd.Status, roomcmd.Budget, roomcmd.Doctor, roomcmd.Note, trust.Trust,
		lane.Send, lane.Targets, lane.Tail, lane.Wait, lane.Hook, serve.Serve, selftestcmd.Selftest, cli.Version, cli.Completion, cli.Help, completeValues},
	Values: map[string][]string{
		"color": {"auto", "always", "never"},
		"to":    {"claude", "codex"},
		"scope": {"project", "local", "user"},
		"form":  {"auto", "exec", "shell"},
		"kind":  events.KindNames(),
		"role":  events.RoleNames(),
		"diet":  diet.Names,
		"agent": {"claude", "codex", room.AgentOrchestrator},
	},
}

// run is main without os.Exit, so deferred functions run and tests can call it.
func run(ctx context.Context, args []string, io *cli.IO) int {
	return cli.Run(ctx, table, args, io)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if !cli.EnableConsole() && os.Getenv("NO_COLOR") == "" {
		os.Setenv("NO_COLOR", "1") // an old console that shows escapes as text: plain output
	}
	io := &cli.IO{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
	}
	code := run(ctx, os.Args[1:], io)
	stop()
	os.Exit(code)
}

// completeValues answers the dynamic completions of the scripts (session ids);
// hidden.
var completeValues = &cli.Command{
	Entry: cli.Entry{Name: "__complete", Usage: "sessions|replay-sessions", Short: "Dynamic values for the completion scripts", Hidden: true},
	Run:   runComplete,
}

// runComplete answers the completion scripts' dynamic values: session ids.
// It prints nothing (exit 0) when there is nothing to offer.
func runComplete(inv *cli.Invocation) error {
	fs := inv.Flags()
	if err := inv.Parse(fs); err != nil {
		return err
	}
	var ids []string
	switch fs.Arg(0) {
	case "sessions":
		ids = view.TargetIDs("")
	case "replay-sessions":
		wd, _ := os.Getwd()
		ids = workspace.LogSessions(wd)
	}
	for _, id := range ids {
		fmt.Fprintln(inv.IO.Out, id)
	}
	return nil
}
