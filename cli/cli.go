// Package cli is relay-baton's command line as a framework and a spec: the
// command table as exported data (each command's name, aliases, usage and
// help texts), dispatch, --help, the completion scripts generated from the
// same table, error and exit-code reporting, the colour decision and the
// build version.
//
//	os.Args ─► Run ─► colour (--color, NO_COLOR, TTY) ─► Table lookup ─► Command.Run(Invocation)
//	                                                                        │ Flags, Parse (--help)
//	error ◄── report: UsageError 2, ExitError n, ErrSilent 1 ◄──────────────┘
//	Table ─► probe each Run's flag set ─► bash / zsh / fish / PowerShell scripts
//
// It knows no lane and no room: each command is a package of its own
// under cmd/ (its row, its flags and its Run: one call into room,
// conversation or server, then render), and package main lists them in
// its table with the values only they know (diet profiles, agent names,
// event kinds and roles). Its own commands are help, completion and
// version; it also keeps the did-you-mean words (Suggest, DidYouMean).
// Every command table of the module is made of rows holding an Entry:
// main's, the hooks' (cmd/lane) and the room's slash commands.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// Entry is what every command table of relay-baton says about one command
// to a person: this command line's commands (Command), the hook
// subcommands, and the room's slash commands (room.Command) are rows that
// hold an Entry, so help, completion and lookup walk one shape.
type Entry struct {
	Name    string
	Aliases []string
	Usage   string // arguments after the name, e.g. "[--json] [--limit N]"
	Short   string // one line for the command list
	Hidden  bool   // left out of help and completion
}

// Names are the words that call the command: its name, then its aliases.
func (e *Entry) Names() []string { return append([]string{e.Name}, e.Aliases...) }

// Called reports whether word calls the command (its name or an alias).
func (e *Entry) Called(word string) bool {
	return e.Name == word || slices.Contains(e.Aliases, word)
}

// Synopsis is the name and its usage, as a help list shows them.
func (e *Entry) Synopsis() string {
	if e.Usage == "" {
		return e.Name
	}
	return e.Name + " " + e.Usage
}

// Command is one subcommand: a row of the table that drives dispatch, help
// and completion.
type Command struct {
	Entry
	Long string // paragraphs for `help <cmd>`
	// Subcommands (or fixed first arguments) the command dispatches on,
	// for completion; TestSubcommandsDispatch holds them to Run.
	Subcommands []string
	// Dispatch: the Subcommands are rows of their own with their own
	// flags (Invocation.Subcommand), not fixed arguments.
	Dispatch bool
	Run      func(inv *Invocation) error
}

// Table is a command line: its commands, in the order `--help` lists them.
type Table struct {
	Commands []*Command
	// Values are the fixed values completion offers for a flag's value,
	// by flag name.
	Values map[string][]string
	// Suggest, when set, returns the " (did you mean X?)" of an unknown
	// command word.
	Suggest func(word string, names []string) string
}

// Lookup finds a command by name or alias.
func (t *Table) Lookup(name string) *Command {
	for _, c := range t.Commands {
		if c.Called(name) {
			return c
		}
	}
	return nil
}

// VisibleNames are the commands and aliases a user types.
func (t *Table) VisibleNames() []string {
	var out []string
	for _, c := range t.Commands {
		if !c.Hidden {
			out = append(out, c.Names()...)
		}
	}
	return out
}

// IO is the terminal IO a command uses; nothing writes to os.Stdout
// directly, so commands are testable with buffers.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
	// Color is the one colour decision (decideColor: --color, NO_COLOR,
	// TERM=dumb, the TTY), made once by Run. Everything that paints takes
	// it as an argument; nothing reads fatih/color's global NoColor (every
	// painter calls EnableColor and is given this answer).
	Color bool
	// probe, when set, makes Parse capture the command's flag set and stop
	// (completion reads the flags this way; see probeFlags).
	probe *flagProbe
}

// Invocation is what a command's Run gets.
type Invocation struct {
	Ctx   context.Context
	IO    *IO
	Cmd   *Command
	Args  []string // arguments after the command name
	Table *Table
}

// Sub is the invocation of c (a subcommand, or another row) with args.
func (inv *Invocation) Sub(c *Command, args []string) *Invocation {
	return &Invocation{Ctx: inv.Ctx, IO: inv.IO, Cmd: c, Args: args, Table: inv.Table}
}

// UsageError is an error in how a command was called: exit code 2.
type UsageError struct {
	Msg  string
	Hint string // a command line to try, printed as "Try: ..."
}

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError without a hint.
func Usagef(format string, a ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, a...)}
}

// ErrSilent is returned by a command that already printed its failure and
// wants exit code 1 without another message.
var ErrSilent = errors.New("")

// ExitError carries a specific exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// Flags returns a fresh flag set for the command, with the common flags
// (--help, --color) defined and usage wired to the command's help.
func (inv *Invocation) Flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet(inv.Cmd.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.String("color", "auto", "colour output: auto, always or never")
	return fs
}

// Parse parses the arguments into fs. It returns pflag.ErrHelp after
// printing help when --help was given; a UsageError for bad flags.
func (inv *Invocation) Parse(fs *pflag.FlagSet) error {
	if p := inv.IO.probe; p != nil {
		p.fs = fs
		return pflag.ErrHelp
	}
	if err := fs.Parse(inv.Args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			PrintCommandHelp(inv.IO.Out, inv.Cmd, fs)
			return pflag.ErrHelp
		}
		msg := err.Error()
		if word, ok := strings.CutPrefix(msg, "unknown flag: "); ok && inv.Table != nil && inv.Table.Suggest != nil && strings.HasPrefix(word, "--") {
			var names []string
			fs.VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					names = append(names, "--"+f.Name)
				}
			})
			msg += inv.Table.Suggest(word, names) // --jsn: did you mean --json?
		}
		return &UsageError{Msg: msg, Hint: fmt.Sprintf("relay-baton %s --help", inv.Cmd.Name)}
	}
	return nil
}

// Subcommand splits inv's first argument off as one of subs, the rows of a
// command that dispatches on its first word (hook): the invocation it
// returns names the row "<command> <sub>". No argument prints the
// command's help and is a UsageError; --help prints it (pflag.ErrHelp); an
// unknown word is a UsageError.
func (inv *Invocation) Subcommand(subs []*Command) (*Invocation, error) {
	name := inv.Cmd.Name
	if len(inv.Args) == 0 || inv.Args[0] == "--help" || inv.Args[0] == "-h" {
		PrintCommandHelp(inv.IO.Out, inv.Cmd, nil)
		if len(inv.Args) == 0 {
			return nil, &UsageError{Msg: name + " needs a subcommand", Hint: "relay-baton " + name + " --help"}
		}
		return nil, pflag.ErrHelp
	}
	for _, c := range subs {
		if c.Name == inv.Args[0] {
			sub := *c
			sub.Name = name + " " + c.Name
			return inv.Sub(&sub, inv.Args[1:]), nil
		}
	}
	msg := fmt.Sprintf("unknown %s %q", name, inv.Args[0])
	if inv.Table != nil && inv.Table.Suggest != nil {
		names := make([]string, len(subs))
		for i, c := range subs {
			names[i] = c.Name
		}
		msg += inv.Table.Suggest(inv.Args[0], names) // hook instal: did you mean install?
	}
	return nil, &UsageError{Msg: msg, Hint: "relay-baton " + name + " --help"}
}

// WithOut is a copy of inv whose output is w, not a terminal (continue
// --json keeps stdout for its result).
func (inv *Invocation) WithOut(w io.Writer) *Invocation {
	cp, io := *inv, *inv.IO
	io.Out, io.OutTTY = w, false
	cp.IO = &io
	return &cp
}

// PrintJSON writes v as indented JSON to the command's output, with DEL,
// C1, bidi and zero-width characters escaped (events.EscapeJSON): a
// terminal showing it acts on nothing a repository or a model wrote.
func (inv *Invocation) PrintJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := inv.IO.Out.Write(events.EscapeJSON(b.Bytes()))
	return err
}

// KeepInterrupt returns a context that Ctrl-C does not cancel (a REPL
// answers it itself) but SIGTERM and SIGHUP do; stop releases it.
func KeepInterrupt(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel() }
}

// Run is main without os.Exit: it decides colour, dispatches args on t and
// returns the exit code, so deferred functions run and tests can call it.
func Run(ctx context.Context, t *Table, args []string, io *IO) int {
	c, err := decideColor(colorModeFromArgs(args), io.OutTTY, os.Getenv)
	if err != nil {
		return report(io, err)
	}
	io.Color = c

	if len(args) == 0 {
		printMainHelp(io.Out, t)
		return 0
	}
	// Leading global flags.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-h" || args[0] == "--help":
			printMainHelp(io.Out, t)
			return 0
		case args[0] == "--version" || args[0] == "-v":
			fmt.Fprintln(io.Out, ReadBuildVersion().String())
			return 0
		case strings.HasPrefix(args[0], "--color="):
			args = args[1:]
		case args[0] == "--color" && len(args) > 1:
			args = args[2:]
		default:
			msg := fmt.Sprintf("unknown flag: %s", args[0])
			if t.Suggest != nil && strings.HasPrefix(args[0], "--") {
				// --verison: did you mean --version?
				word, _, _ := strings.Cut(args[0], "=")
				msg += t.Suggest(word, flagNames(globalFlags))
			}
			return report(io, &UsageError{Msg: msg, Hint: "relay-baton --help"})
		}
	}
	if len(args) == 0 {
		printMainHelp(io.Out, t)
		return 0
	}
	cmd := t.Lookup(args[0])
	if cmd == nil {
		msg := fmt.Sprintf("unknown command %q", args[0])
		if t.Suggest != nil {
			msg += t.Suggest(args[0], t.VisibleNames())
		}
		return report(io, &UsageError{Msg: msg, Hint: "relay-baton --help"})
	}
	if cmd.Run == nil {
		return report(io, fmt.Errorf("internal error: command %s has no Run bound", cmd.Name))
	}
	inv := &Invocation{Ctx: ctx, IO: io, Cmd: cmd, Args: args[1:], Table: t}
	return report(io, cmd.Run(inv))
}

// report prints err (if any) and returns the exit code for it.
func report(io *IO, err error) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	var ue *UsageError
	width := TerminalWidth(io.Err)
	if errors.As(err, &ue) {
		fmt.Fprint(io.Err, FitMessage(render.Inert(ue.Msg), width))
		if ue.Hint != "" {
			fmt.Fprintf(io.Err, "Try: %s\n", render.InertLine(ue.Hint))
		}
		return 2
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	if msg := err.Error(); msg != "" { // may quote a file's or an agent's text
		fmt.Fprint(io.Err, FitMessage(render.Inert(msg), width))
	}
	return code
}

// colorModeFromArgs finds --color=X / --color X before a "--".
func colorModeFromArgs(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--color="); ok {
			return v
		}
		if a == "--color" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return "auto"
}

// decideColor is the one place colour is decided: IO.Color holds its
// answer.
func decideColor(mode string, outTTY bool, getenv func(string) string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if _, set := lookupEnv(getenv, "NO_COLOR"); set {
			return false, nil
		}
		if getenv("TERM") == "dumb" {
			return false, nil
		}
		return outTTY, nil
	}
	return false, Usagef("--color must be auto, always or never, not %q", mode)
}

func lookupEnv(getenv func(string) string, k string) (string, bool) {
	v := getenv(k)
	if v != "" {
		return v, true
	}
	_, ok := os.LookupEnv(k)
	return v, ok
}
