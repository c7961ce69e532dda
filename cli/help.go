package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/events/render"
)

// HelpWidth is the width help texts fit in (an 80-column terminal never
// wraps them); a narrower terminal gets them narrower (see helpWidth).
const HelpWidth = 79

// minHelpWidth is the narrowest helpWidth wraps at.
const minHelpWidth = 40

// helpWidth is the width help written to w is wrapped at: HelpWidth, or
// one less than the columns of the terminal w is when that is narrower
// (never under minHelpWidth), so a 60-column terminal does not break the
// lines a second time in the middle of words.
func helpWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := readline.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return min(HelpWidth, max(cols-1, minHelpWidth))
		}
	}
	return HelpWidth
}

// TerminalWidth is the width a message written to w is wrapped at: one
// less than the columns of the terminal w is (never under minHelpWidth),
// or 0 when w is not a terminal: a pipe or a file keeps its lines whole.
func TerminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := readline.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return max(cols-1, minHelpWidth)
		}
	}
	return 0
}

// FitMessage is "relay-baton: msg" wrapped at width between words
// (render.Wrap, the one word wrapper), continuation lines indented two
// spaces; width 0, or a message of several lines, is left as it is.
func FitMessage(msg string, width int) string {
	line := "relay-baton: " + msg
	if width <= 0 || strings.Contains(msg, "\n") {
		return line + "\n"
	}
	return render.Wrap("relay-baton: ", msg, 2, width)
}

// PrintCommandHelp writes c's help: usage, short line, aliases, long text
// and, when fs is given, its flags.
func PrintCommandHelp(w io.Writer, c *Command, fs *pflag.FlagSet) {
	PrintCommandHelpAt(w, c, fs, helpWidth(w))
}

// PrintCommandHelpAt is PrintCommandHelp wrapped at width columns,
// whatever w is.
func PrintCommandHelpAt(w io.Writer, c *Command, fs *pflag.FlagSet, width int) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", "relay-baton "+c.Synopsis(), c.Short)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\nAliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	if c.Long != "" {
		fmt.Fprintf(&b, "\n%s\n", Reflow(strings.TrimRight(c.Long, "\n")))
	}
	if fs != nil {
		fmt.Fprintf(&b, "\nFlags:\n%s", FlagUsages(fs, width))
	}
	io.WriteString(w, FitLines(b.String(), width))
}

// FlagUsages lists fs's flags as pflag's FlagUsagesWrapped does, aligned
// and wrapped at width, but a boolean flag is shown as "--json", not as
// "--json[=true|false]" (pflag 1.1 marks every one so, which also pushes
// the descriptions of all flags far to the right).
func FlagUsages(fs *pflag.FlagSet, width int) string {
	type row struct{ name, usage string }
	var rows []row
	col := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "      --" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		boolean := f.Value.Type() == "bool"
		if varname != "" && !boolean {
			name += " " + varname
		}
		if f.NoOptDefVal != "" && !(boolean && f.NoOptDefVal == "true") {
			name += "[=" + f.NoOptDefVal + "]"
		}
		if !zeroDefault(f) {
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		if f.Deprecated != "" {
			usage += fmt.Sprintf(" (DEPRECATED: %s)", f.Deprecated)
		}
		rows = append(rows, row{name, usage})
		col = max(col, utf8.RuneCountInString(name))
	})
	col += 3
	var b strings.Builder
	for _, r := range rows {
		pad := strings.Repeat(" ", col-utf8.RuneCountInString(r.name))
		b.WriteString(render.Wrap(r.name+pad, r.usage, col, width))
	}
	return b.String()
}

// zeroDefault reports whether f's default is its type's zero value (and
// so not worth a "(default ...)").
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]", "<nil>":
		return true
	}
	return false
}

// Reflow joins the lines of each prose paragraph of s into one line, for
// FitLines to wrap at the terminal's width rather than at the breaks of the
// source: a line joins the one before it when both are prose (neither
// starts with a space or a list mark). Indented lines, lists, tables and
// blank lines stay as they are.
func Reflow(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0:0]
	prose := func(l string) bool {
		return l != "" && l[0] != ' ' && l[0] != '\t' && !strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "* ")
	}
	for i, l := range lines {
		if i > 0 && prose(l) && prose(lines[i-1]) {
			out[len(out)-1] += " " + l
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// FitLines breaks every line of s longer than width at its last space that
// fits; the continuation keeps the line's indentation, plus two spaces for
// a "Usage:" line, a list item, or a line broken before a "[--flag]" (a
// subcommand's usage in a list, whose continuation would else read as the
// next subcommand). A line that starts with a tab is a command to copy and
// paste: it is printed indented four spaces and never broken, whatever the
// width.
func FitLines(s string, width int) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		if literal, ok := strings.CutPrefix(line, "\t"); ok {
			out.WriteString("    " + literal)
			if nl {
				out.WriteString("\n")
			}
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		hanging := false
		if rest := strings.TrimLeft(line, " "); strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "Usage: ") {
			indent, hanging = indent+"  ", true
		}
		for utf8.RuneCountInString(line) > width {
			head := string([]rune(line)[:width+1])
			cut := strings.LastIndex(head, " [-") // keep "[--flag VALUE]" whole
			if cut > len(indent) && !hanging {
				indent, hanging = indent+"  ", true
			}
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

// ExitCodesHelp is every exit code relay-baton uses, as --help lists them
// (the README's table says the same; TestReadmeExitCodes holds them
// together).
const ExitCodesHelp = `Exit codes:
  0  success
  1  runtime failure: a file could not be read or written, a doctor check
     failed, a preview was declined, an agent binary is missing
  2  usage error: unknown command or flag, bad argument, not a git repository
     (and 'hook wait' when it hands a message to the session it wakes)
  4  an agent run failed, was not logged in, or was cancelled (plan, execute,
     continue, handoff)`

func printMainHelp(out io.Writer, t *Table) {
	hw := helpWidth(out)
	var w strings.Builder
	defer func() { io.WriteString(out, FitLines(Reflow(w.String()), hw)) }()
	fmt.Fprintf(&w, `relay-baton directs AI coding agents by turns: Claude Code plans and reviews,
Codex executes, each run as a subprocess of its own CLI after you confirm a
preview. Every turn is appended to .ai-session/conversation.jsonl.

Usage: relay-baton <command> [flags] [args]

Commands:
`)
	names := make([]*Command, 0, len(t.Commands))
	for _, c := range t.Commands {
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
		line := FitLines(fmt.Sprintf("%-*s%s\n", width+4, "", c.Short), hw)
		fmt.Fprintf(&w, "  %-*s  %s", width, c.Name, strings.TrimLeft(line, " "))
	}
	fmt.Fprintf(&w, `
Global flags:
  --color auto|always|never   colour output (NO_COLOR set means never)
  -h, --help                  help for relay-baton or a command
  --version                   print the version

Run 'relay-baton help <command>' or 'relay-baton <command> --help' for details.

%s
`, ExitCodesHelp)
}

func runHelp(inv *Invocation) error {
	if len(inv.Args) == 0 || inv.Args[0] == "--help" || inv.Args[0] == "-h" {
		printMainHelp(inv.IO.Out, inv.Table)
		return nil
	}
	c := inv.Table.Lookup(inv.Args[0])
	if c == nil {
		msg := fmt.Sprintf("unknown command %q", inv.Args[0])
		if inv.Table.Suggest != nil { // as for the command itself: help chta -> did you mean chat?
			msg += inv.Table.Suggest(inv.Args[0], inv.Table.VisibleNames())
		}
		return &UsageError{Msg: msg, Hint: "relay-baton --help"}
	}
	return c.Run(inv.Sub(c, append(inv.Args[1:len(inv.Args):len(inv.Args)], "--help")))
}
