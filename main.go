// Command relay-baton lets one person direct AI coding agents by turns:
// Claude Code plans and reviews, Codex executes, each as a subprocess of its
// own CLI, and every turn is logged to .ai-session/conversation.jsonl. It can
// also chat with an already-running Claude Code session through a file inbox
// delivered by hooks.
//
// main binds the Run functions of the command table: package cli holds the
// table as data, dispatch, help, completion and the exit codes. Each Run
// lives in a cmd_*.go file beside this one: flags, one call into room,
// conversation or server, then render (events/render). The orchestrator
// lane's logic (hooks, lanes, follow, targets, hook install) is
// conversation's.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/workspace"
)

func init() {
	cli.Chat.Run = runChat
	cli.Replay.Run = runReplay
	cli.Plan.Run = runPlan
	cli.Execute.Run = runExecute
	cli.Continue.Run = runContinue
	cli.Handoff.Run = runHandoff
	cli.Diff.Run = runDiff
	cli.Apply.Run = runApply
	cli.Undo.Run = runUndo
	cli.Runs.Run = runRuns
	cli.Review.Run = runReview
	cli.Status.Run = runStatus
	cli.Budget.Run = runBudget
	cli.Doctor.Run = runDoctor
	cli.Note.Run = runNote
	cli.Trust.Run = runTrust
	cli.Send.Run = runSend
	cli.Targets.Run = runTargets
	cli.Tail.Run = runTail
	cli.Wait.Run = runWait
	cli.Hook.Run = runHook
	cli.Serve.Run = runServe
	cli.Selftest.Run = runSelftest
	cli.Complete.Run = runComplete
	t := cli.RelayBaton
	t.Values["diet"] = diet.Names
	t.Values["agent"] = []string{"claude", "codex", room.AgentOrchestrator}
}

// run is main without os.Exit, so deferred functions run and tests can call it.
func run(ctx context.Context, args []string, io *cli.IO) int {
	return cli.Run(ctx, cli.RelayBaton, args, io)
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
		ids = conversation.TargetIDs("")
	case "replay-sessions":
		wd, _ := os.Getwd()
		ids = workspace.LogSessions(wd)
	}
	for _, id := range ids {
		fmt.Fprintln(inv.IO.Out, id)
	}
	return nil
}
