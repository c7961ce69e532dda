// Command relay-baton lets one person direct AI coding agents by turns:
// Claude Code plans and reviews, Codex executes, each as a subprocess of its
// own CLI, and every turn is logged to .ai-session/conversation.jsonl. It can
// also chat with an already-running Claude Code session through a file inbox
// delivered by hooks.
//
// main only dispatches: each subcommand is a row of the commands table, and
// its run function lives in a cmd_*.go file beside this one: flags, one call
// into room or conversation, then render (events/render). The orchestrator
// lane's logic (hooks, lanes, follow, targets) is conversation's.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/relay-baton/relay-baton/room"
	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/events/render"
)

// command is one subcommand: the table below drives dispatch and help.
type command struct {
	Name    string
	Aliases []string
	Usage   string // arguments after the name, e.g. "[--json] [--limit N]"
	Short   string // one line for the command list
	Long    string // paragraphs for `help <cmd>`
	Hidden  bool
	// Subcommands (or fixed first arguments) the command dispatches on,
	// for completion; TestSubcommandsDispatch holds them to Run.
	Subcommands []string
	Run         func(inv *invocation) error
}

// commands is the table of subcommands, in the order `--help` lists them.
var commands []*command

func init() {
	commands = []*command{
		chatCommand,
		replayCommand,
		planCommand,
		executeCommand,
		continueCommand,
		handoffCommand,
		reviewCommand,
		statusCommand,
		budgetCommand,
		doctorCommand,
		noteCommand,
		sendCommand,
		targetsCommand,
		tailCommand,
		waitCommand,
		hookCommand,
		serveCommand,
		versionCommand,
		completionCommand,
		helpCommand,
		completeCommand,
	}
	hookCommand.Subcommands = []string{"stop", "wait", "prompt-submit", "session-start", "install"}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// streams is the terminal IO a command uses; nothing writes to os.Stdout
// directly, so commands are testable with buffers.
type streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	InTTY  bool
	OutTTY bool
	Color  bool // colour decided once, from --color, NO_COLOR and the TTY check
	// probe, when set, makes parse capture the command's flag set and stop
	// (completion reads the flags this way; see probeFlags).
	probe *flagProbe
}

// invocation is what a command's run function gets.
type invocation struct {
	Ctx  context.Context
	IO   *streams
	Cmd  *command
	Args []string // arguments after the command name
	// colorMode is the --color value seen on the command line ("" = auto).
	colorMode string
}

// usageError is an error in how a command was called: exit code 2.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// errSilent is returned by a command that already printed its failure and
// wants exit code 1 without another message.
var errSilent = errors.New("")

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// flags returns a fresh flag set for the command, with the common flags
// (--help, --color) defined and usage wired to the command's help.
func (inv *invocation) flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet(inv.Cmd.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.String("color", "auto", "colour output: auto, always or never")
	return fs
}

// parse parses args into fs. It returns pflag.ErrHelp after printing help
// when --help was given; a usageError for bad flags.
func (inv *invocation) parse(fs *pflag.FlagSet) error {
	if p := inv.IO.probe; p != nil {
		p.fs = fs
		return pflag.ErrHelp
	}
	if err := fs.Parse(inv.Args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandHelp(inv.IO.Out, inv.Cmd, fs)
			return pflag.ErrHelp
		}
		return &usageError{msg: err.Error(), hint: fmt.Sprintf("relay-baton %s --help", inv.Cmd.Name)}
	}
	return nil
}

// helpWidth is the width help texts fit in (an 80-column terminal never
// wraps them).
const helpWidth = 79

func printCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", strings.TrimSpace("relay-baton "+c.Name+" "+c.Usage), c.Short)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\nAliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	if c.Long != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.Long, "\n"))
	}
	if fs != nil {
		fmt.Fprintf(&b, "\nFlags:\n%s", fs.FlagUsagesWrapped(helpWidth))
	}
	io.WriteString(w, fitLines(b.String(), helpWidth))
}

// fitLines breaks every line of s longer than width at its last space that
// fits; the continuation keeps the line's indentation, plus two spaces for
// a "Usage:" line or a list item.
func fitLines(s string, width int) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if rest := strings.TrimLeft(line, " "); strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "Usage: ") {
			indent += "  "
		}
		for utf8.RuneCountInString(line) > width {
			head := string([]rune(line)[:width+1])
			cut := strings.LastIndex(head, " [") // keep "[--flag VALUE]" whole
			if cut <= len(indent) {
				cut = strings.LastIndex(head, " ")
			}
			if cut <= len(indent) {
				break // one long word: leave it
			}
			out.WriteString(strings.TrimRight(line[:cut], " ") + "\n")
			line = indent + strings.TrimLeft(line[cut:], " ")
		}
		out.WriteString(line)
		if nl {
			out.WriteString("\n")
		}
	}
	return out.String()
}

const exitCodesHelp = `Exit codes:
  0  success
  1  runtime failure (an agent failed, a file could not be read or written)
  2  usage error (unknown command or flag, bad argument, not a git repository)`

func printMainHelp(out io.Writer) {
	var w strings.Builder
	defer func() { io.WriteString(out, fitLines(w.String(), helpWidth)) }()
	fmt.Fprintf(&w, `relay-baton directs AI coding agents by turns: Claude Code plans and reviews,
Codex executes, each run as a subprocess of its own CLI after you confirm a
preview. Every turn is appended to .ai-session/conversation.jsonl.

Usage: relay-baton <command> [flags] [args]

Commands:
`)
	names := make([]*command, 0, len(commands))
	for _, c := range commands {
		if !c.Hidden {
			names = append(names, c)
		}
	}
	width := 0
	for _, c := range names {
		width = max(width, len(c.Name))
	}
	for _, c := range names {
		// Continuation lines under the description column.
		line := fitLines(fmt.Sprintf("%-*s%s\n", width+4, "", c.Short), helpWidth)
		fmt.Fprintf(&w, "  %-*s  %s", width, c.Name, strings.TrimLeft(line, " "))
	}
	fmt.Fprintf(&w, `
Global flags:
  --color auto|always|never   colour output (NO_COLOR set means never)
  -h, --help                  help for relay-baton or a command
  --version                   print the version

Run 'relay-baton help <command>' or 'relay-baton <command> --help' for details.

%s
`, exitCodesHelp)
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

// decideColor is the one place colour is decided.
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
	return false, usagef("--color must be auto, always or never, not %q", mode)
}

func lookupEnv(getenv func(string) string, k string) (string, bool) {
	v := getenv(k)
	if v != "" {
		return v, true
	}
	_, ok := os.LookupEnv(k)
	return v, ok
}

// run is main without os.Exit, so deferred functions run and tests can call it.
func run(ctx context.Context, args []string, io *streams) int {
	mode := colorModeFromArgs(args)
	c, err := decideColor(mode, io.OutTTY, os.Getenv)
	if err != nil {
		return report(io, err)
	}
	io.Color = c
	color.NoColor = !c

	if len(args) == 0 {
		printMainHelp(io.Out)
		return 0
	}
	// Leading global flags.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-h" || args[0] == "--help":
			printMainHelp(io.Out)
			return 0
		case args[0] == "--version" || args[0] == "-v":
			fmt.Fprintln(io.Out, readBuildVersion().String())
			return 0
		case strings.HasPrefix(args[0], "--color="):
			args = args[1:]
		case args[0] == "--color" && len(args) > 1:
			args = args[2:]
		default:
			return report(io, &usageError{msg: fmt.Sprintf("unknown flag %s", args[0]), hint: "relay-baton --help"})
		}
	}
	if len(args) == 0 {
		printMainHelp(io.Out)
		return 0
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return report(io, &usageError{msg: fmt.Sprintf("unknown command %q%s", args[0], room.DidYouMean("", room.Suggest(args[0], visibleNames()))), hint: "relay-baton --help"})
	}
	inv := &invocation{Ctx: ctx, IO: io, Cmd: cmd, Args: args[1:], colorMode: mode}
	return report(io, cmd.Run(inv))
}

// report prints err (if any) and returns the exit code for it.
func report(io *streams, err error) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(io.Err, "relay-baton: %s\n", render.Inert(ue.msg))
		if ue.hint != "" {
			fmt.Fprintf(io.Err, "Try: %s\n", ue.hint)
		}
		return 2
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" { // may quote a file's or an agent's text
		fmt.Fprintf(io.Err, "relay-baton: %s\n", render.Inert(msg))
	}
	return code
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	io := &streams{
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

var helpCommand = &command{
	Name:  "help",
	Usage: "[command]",
	Short: "Show help for relay-baton or one command",
	Run: func(inv *invocation) error {
		if len(inv.Args) == 0 || inv.Args[0] == "--help" || inv.Args[0] == "-h" {
			printMainHelp(inv.IO.Out)
			return nil
		}
		c := lookup(inv.Args[0])
		if c == nil {
			return &usageError{msg: fmt.Sprintf("unknown command %q", inv.Args[0]), hint: "relay-baton --help"}
		}
		sub := &invocation{Ctx: inv.Ctx, IO: inv.IO, Cmd: c, Args: append(inv.Args[1:len(inv.Args):len(inv.Args)], "--help")}
		return c.Run(sub)
	},
}
