package roomcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room"
)

// agentCommand runs a one-shot agent command (plan, execute, handoff):
// the room's flags plus extra's, args checks the arguments and names the
// command for the log, then the engine, the --yes gate, the record and run.
func agentCommand(inv *cli.Invocation, extra func(*pflag.FlagSet, *Flags), args func([]string) (string, error), run func(*room.Engine) error) error {
	var f Flags
	fs := inv.Flags()
	f.Define(fs, true, false)
	// plan, execute and handoff start one agent's conversation; the loop
	// of 'continue' keeps its own and does not take --continue.
	fs.BoolVar(&f.Cont, "continue", false, "continue the agent's conversation recorded in .ai-session/conversation.jsonl (default: a new conversation)")
	if extra != nil {
		extra(fs, &f)
	}
	if err := inv.Parse(fs); err != nil {
		return err
	}
	record, err := args(fs.Args())
	if err != nil {
		return err
	}
	e, err := OpenToRun(inv, inv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Record(record)
	if err := Err(run(e)); err != nil {
		return err
	}
	return Unrecorded(e)
}

// inPlaceFlag is agentCommand's extra flags of execute: --in-place.
func inPlaceFlag(fs *pflag.FlagSet, f *Flags) { defineInPlace(fs, f) }

// Plan is its command's row of the table (usage, help) and its Run.
var Plan = &cli.Command{Entry: cli.Entry{Name: "plan", Usage: "<task> [--yes] [--continue] [--allow-env NAME]...", Short: "Have the planner write plan.md (preview first)"}, Run: runPlan}

func runPlan(inv *cli.Invocation) error {
	var task string
	return agentCommand(inv, nil, func(args []string) (string, error) {
		if task = strings.TrimSpace(strings.Join(args, " ")); task == "" {
			return "", &cli.UsageError{Msg: "plan needs a task", Hint: `relay-baton plan "add a --verbose flag"`}
		}
		return "plan " + task, nil
	}, func(e *room.Engine) error { return e.Plan(inv.Ctx, task, false) })
}

// Execute is its command's row of the table (usage, help) and its Run.
var Execute = &cli.Command{Entry: cli.Entry{Name: "execute", Usage: "[--yes] [--continue] [--in-place] [--allow-env NAME]...", Short: "Run the executor against plan.md in a worktree of its own (preview first)"}, Run: runExecute}

func runExecute(inv *cli.Invocation) error {
	return agentCommand(inv, inPlaceFlag, func(args []string) (string, error) {
		if len(args) > 0 {
			return "", cli.Usagef("execute takes no arguments (it runs .ai-session/plan.md)")
		}
		return "execute", nil
	}, func(e *room.Engine) error { return e.Execute(inv.Ctx) })
}

// Continue is its command's row of the table (usage, help) and its Run.
var Continue = &cli.Command{
	Entry: cli.Entry{Name: "continue", Usage: "[--max-steps N] [--yes] [--json] [--in-place] [--allow-env NAME]...", Short: "Run the bounded plan<->execute loop on plan.md (one confirmation)"},
	Long: `The room's /continue as one command: each step codex (the executor) works on the plan's
next step, then claude (the planner) reads the step's answer and diff and rewrites
.ai-session/plan.md (the old one backed up), or ends its answer with the line PLAN COMPLETE.
No plan update follows the last step. The loop stops on --max-steps (default 3, at most 20),
PLAN COMPLETE, a step that leaves the repository unchanged, a budget ratio of 0.95, an agent
failure or Ctrl-C. One preview shows the loop's shape and its first prompt; every later prompt
is logged as a prompt_preview before it runs (relay-baton replay shows them). --json prints
the loop's result (steps, reason, agent runs, plan updates) on stdout, everything else on
stderr. Exit 0 when the loop stopped normally, 4 on an agent failure or Ctrl-C.`,
	Run: runContinue,
}

func runContinue(inv *cli.Invocation) error {
	var f Flags
	fs := inv.Flags()
	f.Define(fs, true, true)
	defineInPlace(fs, &f)
	maxSteps := fs.IntP("max-steps", "n", resume.DefaultMaxSteps, fmt.Sprintf("the most steps (executor then planner) to run: 1 to %d (0 = the default)", resume.MaxMaxSteps))
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("continue takes no arguments (it runs .ai-session/plan.md); the bound is --max-steps N")
	}
	n, err := resume.CheckMaxSteps(*maxSteps)
	if err != nil {
		return &cli.UsageError{Msg: err.Error(), Hint: "relay-baton continue --max-steps 3"}
	}
	engineInv := inv
	if f.JSON { // stdout is the JSON result's alone
		engineInv = inv.WithOut(inv.IO.Err)
	}
	e, err := OpenToRun(inv, engineInv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	e.RecordContinue(n)
	lr, err := e.Continue(inv.Ctx, n)
	if f.JSON && lr.Reason != "" && lr.Reason != resume.StopDeclined {
		if jerr := inv.PrintJSON(lr); jerr != nil {
			return jerr
		}
	}
	if err != nil && (lr.Reason == resume.StopFailure || lr.Reason == resume.StopCancelled) && lr.AgentRuns > 0 {
		return &cli.ExitError{Code: 4, Err: err}
	}
	if err := Err(err); err != nil {
		return err
	}
	return Unrecorded(e)
}

// Handoff is its command's row of the table (usage, help) and its Run.
var Handoff = &cli.Command{
	Entry:       cli.Entry{Name: "handoff", Usage: "--to claude|codex [--yes] [--continue] [--in-place] [--allow-env NAME]...", Short: "Build handoff.md and launch the next agent (preview first)"},
	Subcommands: []string{"claude", "codex"},
	Run:         runHandoff,
}

func runHandoff(inv *cli.Invocation) error {
	var to string
	return agentCommand(inv, func(fs *pflag.FlagSet, f *Flags) {
		fs.StringVar(&to, "to", "", "the agent to hand off to: claude or codex")
		defineInPlace(fs, f)
	}, func(args []string) (string, error) {
		if to == "" && len(args) == 1 {
			to = args[0]
		}
		if to != "claude" && to != "codex" {
			return "", &cli.UsageError{Msg: "handoff needs --to claude or --to codex", Hint: "relay-baton handoff --to codex"}
		}
		return "handoff --to " + to, nil
	}, func(e *room.Engine) error { return e.Handoff(inv.Ctx, to) })
}
