// Package roomcmd holds the Agent Room's commands: chat (the room
// itself), the one-shot agent commands (plan, execute, continue, handoff)
// and the read-only reports (review, status, budget, doctor) and note,
// each its row of the command table, its flags and its Run; and the
// opening of the room's engine they share with the runs commands
// (Flags, OpenEngine, OpenToRun, Report, Err, Unrecorded).
package roomcmd

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

// Flags are the flags the room's commands share.
type Flags struct {
	Path, Agent, Diet    string
	AllowKeys, Yes, JSON bool
	AllowEnv             []string // --allow-env NAME, repeatable
	Cont                 bool     // --continue: the agents' conversations from the log
	// ReadOnly: a report, which creates and records nothing; NoRepo: it
	// may also run outside a git repository (doctor).
	ReadOnly, NoRepo bool
	InPlace          bool // --in-place: the executor edits the working tree, no worktree
}

// defineInPlace defines --in-place on the commands that run the executor.
func defineInPlace(fs *pflag.FlagSet, f *Flags) {
	fs.BoolVar(&f.InPlace, "in-place", false, "run the executor in your working tree instead of a worktree of its own (/undo then cannot tell your edits made during the run from the agent's)")
}

// Define defines the shared flags: --path and --diet; with agentRun --yes and
// the credential flags; with report --json.
func (f *Flags) Define(fs *pflag.FlagSet, agentRun, report bool) {
	fs.StringVar(&f.Path, "path", ".", "a directory inside the git repository")
	fs.StringVar(&f.Diet, "diet", "", "diet profile: off, lite, balanced (default), caveman, ultra")
	if agentRun {
		fs.BoolVarP(&f.Yes, "yes", "y", false, "confirm the preview without asking (required when stdin is not a terminal)")
		defineAllowEnv(fs, f)
	}
	if report {
		fs.BoolVar(&f.JSON, "json", false, "print JSON")
	}
}

// defineAllowEnv defines the credential flags of the commands that run
// agents.
func defineAllowEnv(fs *pflag.FlagSet, f *Flags) {
	fs.BoolVar(&f.AllowKeys, "allow-api-key-env", false, "pass each agent its own API key (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN to claude, OPENAI_API_KEY / CODEX_API_KEY to codex; audited)")
	fs.StringArrayVar(&f.AllowEnv, "allow-env", nil, "pass the credential-like variable `NAME` to agents on purpose (repeatable; audited; they get none by default)")
}

// checkAllowEnv refuses an --allow-env value that is not a variable name.
func checkAllowEnv(inv *cli.Invocation, f *Flags) error {
	for _, n := range f.AllowEnv {
		if !agents.ValidEnvName(n) {
			return &cli.UsageError{Msg: fmt.Sprintf("--allow-env takes a variable name, not %q", n), Hint: "relay-baton " + inv.Cmd.Name + " --allow-env GITHUB_TOKEN"}
		}
	}
	return nil
}

// OpenEngine opens the room's engine for a command with flags f: its
// --allow-env and --path checked (usage errors), a line terminal for
// questions when stdin is one, and the agents' recorded conversations
// continued under --continue; the caller closes it.
func OpenEngine(inv *cli.Invocation, f *Flags, spinner bool) (*room.Engine, error) {
	if err := checkAllowEnv(inv, f); err != nil {
		return nil, err
	}
	if err := checkPathFlag(inv, f.Path); err != nil {
		return nil, err
	}
	var term room.Terminal
	if inv.IO.InTTY {
		term = &repl.LineTerminal{In: bufio.NewReader(inv.IO.In), Out: inv.IO.Out, Err: inv.IO.Err, Stdin: inv.IO.In, Dir: os.TempDir()}
	}
	e, err := room.New(room.Config{
		Dir: f.Path, Out: inv.IO.Out, Color: inv.IO.Color, Spinner: spinner && inv.IO.OutTTY,
		Term: term, AutoYes: f.Yes, AllowAPIKeyEnv: f.AllowKeys, AllowEnv: f.AllowEnv, Agent: f.Agent, Diet: f.Diet,
		ReadOnly: f.ReadOnly, NoRepo: f.NoRepo, InPlace: f.InPlace,
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
	if f.Cont {
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

// Err maps engine errors to exit codes: declined 1 (already said),
// usage / no plan / no terminal 2, agent failure 4.
func Err(err error) error {
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

// Unrecorded is the error of a command whose work could not be recorded
// in the conversation log (a full disk): it says so and exits 1.
func Unrecorded(e *room.Engine) error {
	if err := e.LogErr(); err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("done, but not all of it was recorded in %s: %w", e.LogPath(), err)}
	}
	return nil
}

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

// OpenToRun opens the room for a one-shot agent command, printing to
// engineInv's output, and refuses to go on when nothing can confirm (no
// terminal, no --yes); the caller closes the engine.
func OpenToRun(inv, engineInv *cli.Invocation, f *Flags) (*room.Engine, error) {
	e, err := OpenEngine(engineInv, f, true)
	if err != nil {
		return nil, err
	}
	if err := needYes(inv, f); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func needYes(inv *cli.Invocation, f *Flags) error {
	if !inv.IO.InTTY && !f.Yes {
		return &cli.UsageError{Msg: room.ErrNeedYes.Error(), Hint: "relay-baton " + inv.Cmd.Name + " --yes ..."}
	}
	return nil
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

// Report runs a read-only report: JSON or text. It creates and
// records nothing (no .ai-session, no conversation event); noRepo lets it
// run outside a git repository.
func Report(inv *cli.Invocation, name string, noRepo bool, extra func(*pflag.FlagSet), fn func(*room.Engine, *Flags) (any, string, error)) error {
	f := Flags{ReadOnly: true, NoRepo: noRepo}
	fs := inv.Flags()
	f.Define(fs, false, true)
	if extra != nil {
		extra(fs)
	}
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s takes no arguments, got %q", name, strings.Join(fs.Args(), " "))
	}
	e, err := OpenEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	v, text, err := fn(e, &f)
	if err != nil {
		return Err(err)
	}
	if f.JSON {
		return inv.PrintJSON(v)
	}
	_, err = inv.IO.Out.Write([]byte(text))
	return err
}

// Review is its command's row of the table (usage, help) and its Run.
var Review = &cli.Command{Entry: cli.Entry{Name: "review", Usage: "[--json]", Short: "Review changed files against the plan (read-only)"}, Run: runReview}

func runReview(inv *cli.Invocation) error {
	return Report(inv, "review", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		r, err := e.Review(inv.Ctx)
		return r, r.Text(), err
	})
}

// Status is its command's row of the table (usage, help) and its Run.
var Status = &cli.Command{Entry: cli.Entry{Name: "status", Usage: "[--json]", Short: "Show session status (read-only)"}, Run: runStatus}

func runStatus(inv *cli.Invocation) error {
	return Report(inv, "status", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		s := e.Status(inv.Ctx)
		return s, s.Text(), nil
	})
}

// Budget is its command's row of the table (usage, help) and its Run.
var Budget = &cli.Command{Entry: cli.Entry{Name: "budget", Usage: "[--diet PROFILE] [--json]", Short: "Show context-budget usage (read-only)"}, Run: runBudget}

func runBudget(inv *cli.Invocation) error {
	return Report(inv, "budget", false, nil, func(e *room.Engine, _ *Flags) (any, string, error) {
		b := e.BudgetEvent(inv.Ctx)
		return b, b.Text(), nil
	})
}

// Doctor is its command's row of the table (usage, help) and its Run.
var Doctor = &cli.Command{Entry: cli.Entry{Name: "doctor", Usage: "[--deep] [--json]", Short: "Check git, agent binaries, keys and .ai-session health (read-only)"}, Run: runDoctor}

func runDoctor(inv *cli.Invocation) error {
	var deep bool
	var failed bool
	err := Report(inv, "doctor", true, func(fs *pflag.FlagSet) {
		fs.BoolVar(&deep, "deep", false, "also check agent versions and arguments, .ai-session health and conversation.jsonl")
	}, func(e *room.Engine, _ *Flags) (any, string, error) {
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

// Note is its command's row of the table (usage, help) and its Run.
var Note = &cli.Command{Entry: cli.Entry{Name: "note", Usage: "<text>", Short: "Append a note to the conversation log"}, Run: runNote}

func runNote(inv *cli.Invocation) error {
	var f Flags
	fs := inv.Flags()
	fs.StringVar(&f.Path, "path", ".", "a directory inside the git repository")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if text == "" {
		return &cli.UsageError{Msg: "note needs text", Hint: `relay-baton note "tried X, it failed"`}
	}
	e, err := OpenEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	return e.Note(text)
}
