package room

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/reports"

	"github.com/spf13/pflag"
)

// /help fits in 80 columns (no line longer than 79), names every command
// and every flag a command takes.
func TestHelpFitsAndListsFlags(t *testing.T) {
	text := HelpText()
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > HelpWidth || n >= 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	for _, c := range Commands {
		if !strings.Contains(text, "\n  /"+c.Name+" ") && !strings.HasPrefix(text, "  /"+c.Name+" ") {
			t.Errorf("/help lacks /%s", c.Name)
		}
	}
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	replay.AddFlags(fs, &replay.Options{})
	cmd := Lookup("replay")
	fs.VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(cmd.Usage, "--"+f.Name) {
			t.Errorf("/replay's usage lacks --%s: %q", f.Name, cmd.Usage)
		}
	})
	h := newHarness(t)
	if _, err := h.e.Process(context.Background(), "/help"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "--role r,..") {
		t.Errorf("/help output lacks /replay's --role:\n%s", h.out.String())
	}
}

func TestSuggestions(t *testing.T) {
	cases := map[string]string{
		"/pla":     "unknown command: /pla (did you mean /plan?)",
		"/exectue": "unknown command: /exectue (did you mean /execute?)",
		"/stauts":  "unknown command: /stauts (did you mean /status?)",
		"/zzzzzz":  "unknown command: /zzzzzz (try /help)",
	}
	for in, want := range cases {
		_, err := Parse(in)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{{0, "file", "0 files"}, {1, "file", "1 file"}, {2, "changed file", "2 changed files"}, {1, "match|matches", "1 match"}, {3, "match|matches", "3 matches"}} {
		if got := render.Count(c.n, c.noun); got != c.want {
			t.Errorf("render.Count(%d, %q) = %q", c.n, c.noun, got)
		}
	}
	s := reports.SessionStatus{Active: "claude", ChangedFiles: []string{"a.go"}}
	if !strings.Contains(s.Text(), "changed: 1 file\n") && !strings.HasSuffix(strings.TrimRight(s.Text(), "\n"), "changed: 1 file\n  a.go") {
		t.Errorf("status: %q", s.Text())
	}
	if l := (reports.Review{Changed: make([]gitrepo.Change, 1), Deletions: []string{"x"}, TestsTouched: []string{"a_test.go"}}).SummaryLine(); !strings.Contains(l, "1 changed file,") || !strings.Contains(l, "1 deletion,") || !strings.Contains(l, "1 test touched") {
		t.Errorf("review: %q", l)
	}
}
