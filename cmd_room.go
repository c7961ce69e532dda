package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/repl"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/workspace"
)

// roomFlags are the flags the room's commands share.
type roomFlags struct {
	path, agent, diet  string
	allowKeys, yes, js bool
	allowEnv           []string // --allow-env NAME, repeatable
	cont               bool     // --continue: the agents' conversations from the log
	// readOnly: a report, which creates and records nothing; noRepo: it
	// may also run outside a git repository (doctor).
	readOnly, noRepo bool
	inPlace          bool // --in-place: the executor edits the working tree, no worktree
}

// defineInPlace defines --in-place on the commands that run the executor.
func defineInPlace(fs *pflag.FlagSet, f *roomFlags) {
	fs.BoolVar(&f.inPlace, "in-place", false, "run the executor in your working tree instead of a worktree of its own (/undo then cannot tell your edits made during the run from the agent's)")
}

func (f *roomFlags) define(fs *pflag.FlagSet, agentRun, report bool) {
	fs.StringVar(&f.path, "path", ".", "a directory inside the git repository")
	fs.StringVar(&f.diet, "diet", "", "diet profile: off, lite, balanced (default), caveman, ultra")
	if agentRun {
		fs.BoolVarP(&f.yes, "yes", "y", false, "confirm the preview without asking (required when stdin is not a terminal)")
		defineAllowEnv(fs, f)
	}
	if report {
		fs.BoolVar(&f.js, "json", false, "print JSON")
	}
}

// defineAllowEnv defines the credential flags of the commands that run
// agents.
func defineAllowEnv(fs *pflag.FlagSet, f *roomFlags) {
	fs.BoolVar(&f.allowKeys, "allow-api-key-env", false, "pass each agent its own API key (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN to claude, OPENAI_API_KEY / CODEX_API_KEY to codex; audited)")
	fs.StringArrayVar(&f.allowEnv, "allow-env", nil, "pass the credential-like variable `NAME` to agents on purpose (repeatable; audited; they get none by default)")
}

// checkAllowEnv refuses an --allow-env value that is not a variable name.
func checkAllowEnv(inv *cli.Invocation, f *roomFlags) error {
	for _, n := range f.allowEnv {
		if !agents.ValidEnvName(n) {
			return &cli.UsageError{Msg: fmt.Sprintf("--allow-env takes a variable name, not %q", n), Hint: "relay-baton " + inv.Cmd.Name + " --allow-env GITHUB_TOKEN"}
		}
	}
	return nil
}

func openEngine(inv *cli.Invocation, f *roomFlags, spinner bool) (*room.Engine, error) {
	if err := checkAllowEnv(inv, f); err != nil {
		return nil, err
	}
	if err := checkPathFlag(inv, f.path); err != nil {
		return nil, err
	}
	var term room.Terminal
	if inv.IO.InTTY {
		term = &repl.LineTerminal{In: bufio.NewReader(inv.IO.In), Out: inv.IO.Out, Err: inv.IO.Err, Stdin: inv.IO.In, Dir: os.TempDir()}
	}
	e, err := room.New(room.Config{
		Dir: f.path, Out: inv.IO.Out, Color: inv.IO.Color, Spinner: spinner && inv.IO.OutTTY,
		Term: term, AutoYes: f.yes, AllowAPIKeyEnv: f.allowKeys, AllowEnv: f.allowEnv, Agent: f.agent, Diet: f.diet,
		ReadOnly: f.readOnly, NoRepo: f.noRepo, InPlace: f.inPlace,
	})
	if err != nil {
		if errors.Is(err, workspace.ErrNotGitRepo) {
			return nil, &cli.UsageError{Msg: err.Error()}
		}
		var ce *room.ConfigError
		if errors.As(err, &ce) {
			return nil, &cli.UsageError{Msg: err.Error(), Hint: "relay-baton " + inv.Cmd.Name + " --help"}
		}
		return nil, err
	}
	if lt, ok := term.(*repl.LineTerminal); ok && e.SessionDir != "" {
		lt.Dir = e.SessionDir
	}
	if f.cont {
		if err := e.ContinueConversations(); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// checkPathFlag refuses a --path that is not a directory as a usage error
// (exit 2) that names the flag and what to give instead.
func checkPathFlag(inv *cli.Invocation, dir string) error {
	fi, err := os.Stat(dir)
	why := ""
	switch {
	case errors.Is(err, os.ErrNotExist):
		why = "no such directory"
	case err == nil && !fi.IsDir():
		why = "not a directory"
	default:
		return nil
	}
	return &cli.UsageError{Msg: fmt.Sprintf("--path %s: %s", dir, why), Hint: "relay-baton " + inv.Cmd.Name + " --path DIR (a directory inside a git repository; default: the current one)"}
}

// roomErr maps engine errors to exit codes: declined 1 (already said),
// usage / no plan / no terminal 2, agent failure 4.
func roomErr(err error) error {
	var ae *room.AgentError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, room.ErrDeclined):
		return cli.ErrSilent
	case errors.Is(err, room.ErrNoPlan), errors.Is(err, room.ErrNeedYes):
		return &cli.UsageError{Msg: err.Error()}
	case errors.Is(err, agents.ErrNotLoggedIn), errors.As(err, new(*agents.MissingEnvError)):
		// The run's summary line said how to log in, or which variable
		// to pass: nothing to add.
		return &cli.ExitError{Code: 4}
	case errors.As(err, &ae):
		return &cli.ExitError{Code: 4, Err: err}
	}
	return err
}

func runChat(inv *cli.Invocation) error {
	var f roomFlags
	fs := inv.Flags()
	f.define(fs, false, false)
	fs.StringVar(&f.agent, "agent", "claude", "the active agent at start: claude, codex or orchestrator (the workspace's lead Claude Code session)")
	defineAllowEnv(fs, &f)
	defineInPlace(fs, &f)
	fs.BoolVarP(&f.yes, "yes", "y", false, "confirm every preview without asking (without it, a room whose stdin is not a terminal runs no agent)")
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
	orchestrator := strings.EqualFold(f.agent, room.AgentOrchestrator)
	if !orchestrator && f.agent != "claude" && f.agent != "codex" {
		return &cli.UsageError{Msg: "unknown agent \"" + f.agent + "\": choose claude, codex or orchestrator", Hint: "relay-baton chat --help"}
	}
	if orchestrator {
		f.agent = ""
	}
	e, err := openEngine(inv, &f, true)
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

// agentCommand runs a one-shot agent command (plan, execute, handoff):
// the room's flags plus extra's, args checks the arguments and names the
// command for the log, then the engine, the --yes gate, the record and run.
func agentCommand(inv *cli.Invocation, extra func(*pflag.FlagSet, *roomFlags), args func([]string) (string, error), run func(*room.Engine) error) error {
	var f roomFlags
	fs := inv.Flags()
	f.define(fs, true, false)
	// plan, execute and handoff start one agent's conversation; the loop
	// of 'continue' keeps its own and does not take --continue.
	fs.BoolVar(&f.cont, "continue", false, "continue the agent's conversation recorded in .ai-session/conversation.jsonl (default: a new conversation)")
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
	e, err := openToRun(inv, inv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Record(record)
	if err := roomErr(run(e)); err != nil {
		return err
	}
	return unrecorded(e)
}

// inPlaceFlag is agentCommand's extra flags of execute: --in-place.
func inPlaceFlag(fs *pflag.FlagSet, f *roomFlags) { defineInPlace(fs, f) }

// unrecorded is the error of a command whose work could not be recorded
// in the conversation log (a full disk): it says so and exits 1.
func unrecorded(e *room.Engine) error {
	if err := e.LogErr(); err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("done, but not all of it was recorded in %s: %w", e.LogPath(), err)}
	}
	return nil
}

func runPlan(inv *cli.Invocation) error {
	var task string
	return agentCommand(inv, nil, func(args []string) (string, error) {
		if task = strings.TrimSpace(strings.Join(args, " ")); task == "" {
			return "", &cli.UsageError{Msg: "plan needs a task", Hint: `relay-baton plan "add a --verbose flag"`}
		}
		return "plan " + task, nil
	}, func(e *room.Engine) error { return e.Plan(inv.Ctx, task, false) })
}

// openToRun opens the room for a one-shot agent command, printing to
// engineInv's output, and refuses to go on when nothing can confirm (no
// terminal, no --yes); the caller closes the engine.
func openToRun(inv, engineInv *cli.Invocation, f *roomFlags) (*room.Engine, error) {
	e, err := openEngine(engineInv, f, true)
	if err != nil {
		return nil, err
	}
	if err := needYes(inv, f); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func needYes(inv *cli.Invocation, f *roomFlags) error {
	if !inv.IO.InTTY && !f.yes {
		return &cli.UsageError{Msg: room.ErrNeedYes.Error(), Hint: "relay-baton " + inv.Cmd.Name + " --yes ..."}
	}
	return nil
}

func runExecute(inv *cli.Invocation) error {
	return agentCommand(inv, inPlaceFlag, func(args []string) (string, error) {
		if len(args) > 0 {
			return "", cli.Usagef("execute takes no arguments (it runs .ai-session/plan.md)")
		}
		return "execute", nil
	}, func(e *room.Engine) error { return e.Execute(inv.Ctx) })
}

func runContinue(inv *cli.Invocation) error {
	var f roomFlags
	fs := inv.Flags()
	f.define(fs, true, true)
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
	if f.js { // stdout is the JSON result's alone
		engineInv = inv.WithOut(inv.IO.Err)
	}
	e, err := openToRun(inv, engineInv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	e.RecordContinue(n)
	lr, err := e.Continue(inv.Ctx, n)
	if f.js && lr.Reason != "" && lr.Reason != resume.StopDeclined {
		if jerr := inv.PrintJSON(lr); jerr != nil {
			return jerr
		}
	}
	if err != nil && (lr.Reason == resume.StopFailure || lr.Reason == resume.StopCancelled) && lr.AgentRuns > 0 {
		return &cli.ExitError{Code: 4, Err: err}
	}
	if err := roomErr(err); err != nil {
		return err
	}
	return unrecorded(e)
}

func runHandoff(inv *cli.Invocation) error {
	var to string
	return agentCommand(inv, func(fs *pflag.FlagSet, f *roomFlags) {
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

// reportCommand runs a read-only report: JSON or text. It creates and
// records nothing (no .ai-session, no conversation event); noRepo lets it
// run outside a git repository.
func reportCommand(inv *cli.Invocation, name string, noRepo bool, extra func(*pflag.FlagSet), fn func(*room.Engine, *roomFlags) (any, string, error)) error {
	f := roomFlags{readOnly: true, noRepo: noRepo}
	fs := inv.Flags()
	f.define(fs, false, true)
	if extra != nil {
		extra(fs)
	}
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s takes no arguments, got %q", name, strings.Join(fs.Args(), " "))
	}
	e, err := openEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	v, text, err := fn(e, &f)
	if err != nil {
		return roomErr(err)
	}
	if f.js {
		return inv.PrintJSON(v)
	}
	_, err = inv.IO.Out.Write([]byte(text))
	return err
}

func runReview(inv *cli.Invocation) error {
	return reportCommand(inv, "review", false, nil, func(e *room.Engine, _ *roomFlags) (any, string, error) {
		r, err := e.Review(inv.Ctx)
		return r, r.Text(), err
	})
}

func runStatus(inv *cli.Invocation) error {
	return reportCommand(inv, "status", false, nil, func(e *room.Engine, _ *roomFlags) (any, string, error) {
		s := e.Status(inv.Ctx)
		return s, s.Text(), nil
	})
}

func runBudget(inv *cli.Invocation) error {
	return reportCommand(inv, "budget", false, nil, func(e *room.Engine, _ *roomFlags) (any, string, error) {
		b := e.BudgetEvent(inv.Ctx)
		return b, b.Text(), nil
	})
}

func runDoctor(inv *cli.Invocation) error {
	var deep bool
	var failed bool
	err := reportCommand(inv, "doctor", true, func(fs *pflag.FlagSet) {
		fs.BoolVar(&deep, "deep", false, "also check agent versions and arguments, .ai-session health and conversation.jsonl")
	}, func(e *room.Engine, _ *roomFlags) (any, string, error) {
		r := e.Doctor(inv.Ctx, deep)
		r.Checks = append([]reports.Check{{Name: "relay-baton", Status: reports.OK, Detail: cli.ReadBuildVersion().String()}}, r.Checks...)
		bin, _ := os.Executable()
		r.Checks = append(r.Checks, hookinstall.CheckHooks(e.Root, bin)...)
		r.Checks = append(r.Checks, hookinstall.CheckSessions(e.Root)...)
		failed = r.Failed()
		return r, r.RenderWidth(inv.IO.Color, cli.TerminalWidth(inv.IO.Out)), nil
	})
	if err == nil && failed {
		return &cli.ExitError{Code: 1}
	}
	return err
}

func runNote(inv *cli.Invocation) error {
	var f roomFlags
	fs := inv.Flags()
	fs.StringVar(&f.path, "path", ".", "a directory inside the git repository")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if text == "" {
		return &cli.UsageError{Msg: "note needs text", Hint: `relay-baton note "tried X, it failed"`}
	}
	e, err := openEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	return e.Note(text)
}
