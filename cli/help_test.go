package cli

import (
	"strings"
	"testing"
)

func TestReflow(t *testing.T) {
	in := "One line of prose\nthat goes on here.\n\nInstall:\n  bash   a b\n  zsh    c d\n- item one\n- item two\nLast\nparagraph."
	want := "One line of prose that goes on here.\n\nInstall:\n  bash   a b\n  zsh    c d\n- item one\n- item two\nLast paragraph."
	if got := Reflow(in); got != want {
		t.Fatalf("Reflow:\n%s\nwant:\n%s", got, want)
	}
}

// Every command's help is wrapped at the width, not at the breaks of its
// source: no prose line ends where the next line's first word would
// still have fitted.
func TestHelpHasNoRaggedLines(t *testing.T) {
	for _, c := range RelayBaton.Commands {
		var b strings.Builder
		PrintCommandHelp(&b, c, nil)
		lines := strings.Split(b.String(), "\n")
		for i := 1; i < len(lines); i++ {
			prev, cur := lines[i-1], lines[i]
			if prev == "" || cur == "" || cur[0] == ' ' || prev[0] == ' ' || strings.HasPrefix(cur, "- ") {
				continue
			}
			word, _, _ := strings.Cut(cur, " ")
			if len([]rune(prev))+1+len([]rune(word)) <= HelpWidth {
				t.Errorf("%s --help: a ragged break after %q (the next line starts with %q)", c.Name, prev, word)
			}
		}
	}
}
