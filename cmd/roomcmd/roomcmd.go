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

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/cli"
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

// Unrecorded is the error of a command whose work could not be recorded
// in the conversation log (a full disk): it says so and exits 1.
func Unrecorded(e *room.Engine) error {
	if err := e.LogErr(); err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("done, but not all of it was recorded in %s: %w", e.LogPath(), err)}
	}
	return nil
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
