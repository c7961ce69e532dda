package cli

import (
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/spf13/pflag"
)

func TestReflow(t *testing.T) {
	in := "One line of prose\nthat goes on here.\n\nInstall:\n  bash   a b\n  zsh    c d\n- item one\n- item two\nLast\nparagraph."
	want := "One line of prose that goes on here.\n\nInstall:\n  bash   a b\n  zsh    c d\n- item one\n- item two\nLast paragraph."
	if got := Reflow(in); got != want {
		t.Fatalf("Reflow:\n%s\nwant:\n%s", got, want)
	}
}

// Boolean flags read as "--json", not pflag 1.1's "--json[=true|false]";
// other flags keep their value name and a non-zero default.
func TestFlagUsages(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Bool("json", false, "print JSON")
	fs.BoolP("yes", "y", false, "confirm every preview without asking, even when stdin is not a terminal and the run is long")
	fs.String("path", ".", "a `DIR` inside the repository")
	fs.Int("limit", 0, "only the newest N events")
	fs.SortFlags = false
	got := FlagUsages(fs, 50)
	want := `      --json        print JSON
  -y, --yes         confirm every preview without
                    asking, even when stdin is not
                    a terminal and the run is long
      --path DIR    a DIR inside the repository
                    (default ".")
      --limit int   only the newest N events
`
	if got != want {
		t.Fatalf("FlagUsages:\n%s\nwant:\n%s", got, want)
	}
}

// On a terminal narrower than 80 columns the help is wrapped at its width
// (one column less), so the terminal never breaks a word in two.
func TestHelpWidthFollowsTheTerminal(t *testing.T) {
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	defer tty.Close()
	for _, c := range []struct{ cols, want int }{{60, 59}, {200, HelpWidth}, {20, minHelpWidth}} {
		if err := pty.Setsize(ptm, &pty.Winsize{Rows: 24, Cols: uint16(c.cols)}); err != nil {
			t.Fatal(err)
		}
		if got := helpWidth(tty); got != c.want {
			t.Errorf("helpWidth on %d columns = %d, want %d", c.cols, got, c.want)
		}
	}
	var b strings.Builder
	if got := helpWidth(&b); got != HelpWidth {
		t.Errorf("helpWidth of a non-terminal = %d, want %d", got, HelpWidth)
	}
}

// A subcommand's usage broken before a "[--flag]" continues two columns
// further in, not at the indentation of the next subcommand.
func TestFitLinesHangsFlagContinuations(t *testing.T) {
	in := "  install [--agent claude|codex] [--scope project|local|user] [--check]\n  stop\n"
	want := "  install [--agent claude|codex]\n    [--scope project|local|user] [--check]\n  stop\n"
	if got := FitLines(in, 45); got != want {
		t.Fatalf("FitLines:\n%s\nwant:\n%s", got, want)
	}
}

// completion's install lines are commands to copy: no width breaks them
// (at 79 columns the fish line was cut before its target, at 60 the bash
// and zsh lines too).
func TestCompletionInstallLinesNeverWrap(t *testing.T) {
	lines := []string{
		"    echo 'source <(relay-baton completion bash)' >> ~/.bashrc\n",
		"    echo 'source <(relay-baton completion zsh)' >> ~/.zshrc\n",
		"    relay-baton completion fish > ~/.config/fish/completions/relay-baton.fish\n",
		"    source <(relay-baton completion bash)\n",
	}
	for width := minHelpWidth; width <= 200; width++ {
		var b strings.Builder
		PrintCommandHelpAt(&b, Completion, nil, width)
		for _, l := range lines {
			if !strings.Contains(b.String(), l) {
				t.Fatalf("at %d columns completion --help does not hold %q whole:\n%s", width, l, b.String())
			}
		}
	}
	// Prose around them is still wrapped at the width.
	if got := FitLines("a b c d e f\n\tx y z w v u\n", 5); got != "a b c\nd e f\n    x y z w v u\n" {
		t.Fatalf("FitLines: %q", got)
	}
}

// An error at a terminal is wrapped between words (render.Wrap), never in
// the middle of one; in a pipe (width 0) it stays one line.
func TestFitMessage(t *testing.T) {
	msg := "/tmp/x: not inside a git repository (run `git init` there, pass --path to a repository, or --file to a conversation.jsonl)"
	got := FitMessage(msg, 40)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "relay-baton: /tmp/x:") {
		t.Fatalf("FitMessage:\n%s", got)
	}
	for i, l := range lines {
		if len([]rune(l)) > 40 || (i > 0 && !strings.HasPrefix(l, "  ")) {
			t.Errorf("line %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != "relay-baton: "+msg {
		t.Errorf("words changed:\n%s", got)
	}
	if FitMessage(msg, 0) != "relay-baton: "+msg+"\n" {
		t.Errorf("width 0: %q", FitMessage(msg, 0))
	}
}
