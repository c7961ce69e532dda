package main

import (
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/cli"
)

// Every command's help is wrapped at the width, not at the breaks of its
// source: no prose line ends where the next line's first word would
// still have fitted.
func TestHelpHasNoRaggedLines(t *testing.T) {
	for _, c := range table.Commands {
		var b strings.Builder
		cli.PrintCommandHelp(&b, c, nil)
		lines := strings.Split(b.String(), "\n")
		for i := 1; i < len(lines); i++ {
			prev, cur := lines[i-1], lines[i]
			if prev == "" || cur == "" || cur[0] == ' ' || prev[0] == ' ' || strings.HasPrefix(cur, "- ") {
				continue
			}
			word, _, _ := strings.Cut(cur, " ")
			if len([]rune(prev))+1+len([]rune(word)) <= cli.HelpWidth {
				t.Errorf("%s --help: a ragged break after %q (the next line starts with %q)", c.Name, prev, word)
			}
		}
	}
}

// On a terminal of 60 columns every command's help is wrapped at 59, so
// the terminal never breaks a word in two (cli's TestHelpWidthFollowsTheTerminal
// holds the width to the terminal's).
func TestHelpFitsANarrowTerminal(t *testing.T) {
	for _, c := range table.Commands {
		var b strings.Builder
		cli.PrintCommandHelpAt(&b, c, nil, 59)
		literal := map[string]bool{} // commands to copy are never broken (FitLines)
		for _, l := range strings.Split(c.Long, "\n") {
			if cmd, ok := strings.CutPrefix(l, "\t"); ok {
				literal["    "+cmd] = true
			}
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := len([]rune(l)); n > 59 && strings.Contains(strings.TrimSpace(l), " ") && !literal[l] {
				t.Errorf("%s --help at 59 columns: a line of %d: %q", c.Name, n, l)
			}
		}
	}
}
