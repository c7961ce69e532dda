package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/cli/clitest"
)

// toy is a table of its own: cli works without main's commands.
func toy() (*Table, *[]string) {
	var ran []string
	greet := &Command{Entry: Entry{Name: "greet", Aliases: []string{"hi"}, Usage: "[--loud] NAME", Short: "Say hello"}, Long: "Greets NAME."}
	greet.Run = func(inv *Invocation) error {
		fs := inv.Flags()
		loud := fs.Bool("loud", false, "shout")
		fs.String("mood", "", "how")
		if err := inv.Parse(fs); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return &UsageError{Msg: "greet needs a NAME", Hint: "relay-baton greet Ann"}
		}
		ran = append(ran, fs.Arg(0))
		if *loud {
			return &ExitError{Code: 3, Err: errors.New("too loud: \x1b]0;title\a")}
		}
		return nil
	}
	quiet := &Command{Entry: Entry{Name: "quiet", Short: "Fail silently"}, Run: func(*Invocation) error { return ErrSilent }}
	tool := &Command{Entry: Entry{Name: "tool", Short: "Dispatch on a word"}, Subcommands: []string{"a"}, Dispatch: true}
	tool.Run = func(inv *Invocation) error {
		sub, err := inv.Subcommand([]*Command{{Entry: Entry{Name: "a", Short: "the a"}}})
		if err != nil {
			return err
		}
		fs := sub.Flags()
		fs.Bool("deep", false, "deeply")
		if err := sub.Parse(fs); err != nil {
			return err
		}
		ran = append(ran, sub.Cmd.Name)
		return nil
	}
	unbound := &Command{Entry: Entry{Name: "unbound", Short: "Has no Run"}}
	t := &Table{Commands: []*Command{greet, quiet, tool, unbound, Help, Completion},
		Values: map[string][]string{"mood": {"glad", "grim"}},
		Suggest: func(w string, names []string) string {
			if w == "gret" {
				return " (did you mean greet?)"
			}
			return ""
		}}
	return t, &ran
}

func runToy(t *testing.T, args ...string) (code int, out, errOut string, ran []string) {
	t.Helper()
	tab, r := toy()
	var o, e bytes.Buffer
	code = Run(context.Background(), tab, args, &IO{In: strings.NewReader(""), Out: &o, Err: &e})
	return code, o.String(), e.String(), *r
}

// Dispatch, help and the exit codes of each error type, on a toy table.
func TestRunExitCodes(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		out, err string // prefixes
		ran      []string
	}{
		{[]string{"greet", "Ann"}, 0, "", "", []string{"Ann"}},
		{[]string{"hi", "Bo"}, 0, "", "", []string{"Bo"}},
		{[]string{"greet", "--help"}, 0, "Usage: relay-baton greet [--loud] NAME\n\nSay hello\n\nAliases: hi\n\nGreets NAME.\n\nFlags:\n", "", nil},
		{[]string{"help", "hi"}, 0, "Usage: relay-baton greet", "", nil},
		{[]string{"greet"}, 2, "", "relay-baton: greet needs a NAME\nTry: relay-baton greet Ann\n", nil},
		{[]string{"greet", "--bogus", "x"}, 2, "", "relay-baton: unknown flag: --bogus\nTry: relay-baton greet --help\n", nil},
		{[]string{"greet", "--loud", "Cy"}, 3, "", "relay-baton: too loud: ^[]0;title^G\n", []string{"Cy"}},
		{[]string{"quiet"}, 1, "", "", nil},
		{[]string{"gret"}, 2, "", "relay-baton: unknown command \"gret\" (did you mean greet?)\nTry: relay-baton --help\n", nil},
		{[]string{"unbound"}, 1, "", "relay-baton: internal error: command unbound has no Run bound\n", nil},
		{[]string{"--color=sometimes", "greet", "x"}, 2, "", "relay-baton: --color must be auto, always or never, not \"sometimes\"\n", nil},
		{[]string{"tool"}, 2, "Usage: relay-baton tool", "relay-baton: tool needs a subcommand\nTry: relay-baton tool --help\n", nil},
		{[]string{"tool", "--help"}, 0, "Usage: relay-baton tool", "", nil},
		{[]string{"tool", "b"}, 2, "", "relay-baton: unknown tool \"b\"\nTry: relay-baton tool --help\n", nil},
		{[]string{"tool", "a", "--deep"}, 0, "", "", []string{"tool a"}},
		{[]string{"tool", "a", "--help"}, 0, "Usage: relay-baton tool a\n\nthe a\n", "", nil},
		{[]string{}, 0, "relay-baton directs", "", nil},
		{[]string{"--version"}, 0, "relay-baton ", "", nil},
	}
	for _, c := range cases {
		code, out, errOut, ran := runToy(t, c.args...)
		if code != c.code || !strings.HasPrefix(out, c.out) || (c.err == "" && errOut != "") || !strings.HasPrefix(errOut, c.err) || !slices.Equal(ran, c.ran) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q, ran %q; want exit %d, stdout %q..., stderr %q..., ran %q", c.args, code, out, errOut, ran, c.code, c.out, c.err, c.ran)
		}
	}
	if _, out, _, _ := runToy(t, "--help"); !strings.Contains(out, "\n  greet       Say hello\n") {
		t.Errorf("main help lists the table: %q", out)
	}
}

// The completion scripts come from the table: a toy table's commands,
// flags (read from its Run by the probe) and flag values complete in a
// plain bash.
func TestCompletionOfAToyTable(t *testing.T) {
	tab, ran := toy()
	var script bytes.Buffer
	if err := WriteCompletion(&script, tab, "bash"); err != nil {
		t.Fatal(err)
	}
	if len(*ran) != 0 {
		t.Fatalf("probing the flags ran a command: %q", *ran)
	}
	p := filepath.Join(t.TempDir(), "c.bash")
	os.WriteFile(p, script.Bytes(), 0o644)
	lines := [][]string{{"relay-baton", "g"}, {"relay-baton", "hi", "--"}, {"relay-baton", "greet", "--mood", ""}, {"relay-baton", "tool", ""}, {"relay-baton", "tool", "a", "--d"}}
	want := [][]string{{"greet"}, {"--color", "--loud", "--mood", "--help"}, {"glad", "grim"}, {"a"}, {"--deep"}}
	got := clitest.BashComplete(t, p, lines...)
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("%q: got %q, want %q", lines[i], got[i], want[i])
		}
	}
	if err := WriteCompletion(&script, tab, "tcsh"); err == nil {
		t.Error("an unknown shell was accepted")
	}
}
