package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/cmd/lane"
)

// runCLI runs relay-baton in this process (run, as main does) with stdin
// as its input and stdout not a terminal: its exit code, stdout, stderr.
// The one in-process runner of these tests; relayBaton runs the test
// binary as relay-baton in a process of its own.
func runCLI(t testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIOn(t, context.Background(), stdin, false, args...)
}

// runCLIOn is runCLI under ctx, with stdout a terminal when outTTY.
func runCLIOn(t testing.TB, ctx context.Context, stdin string, outTTY bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb lockedBuffer // a command may leave a goroutine writing (--follow)
	code = run(ctx, args, &cli.IO{In: strings.NewReader(stdin), Out: &out, Err: &errb, OutTTY: outTTY})
	return code, out.String(), errb.String()
}

// Every command (and alias) answers --help and `help <cmd>` with its own
// usage on stdout, exit 0, nothing on stderr, and nothing run.
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Chdir(t.TempDir()) // not a repository: --help must not need one
	for _, c := range table.Commands {
		names := append([]string{c.Name}, c.Aliases...)
		for _, name := range names {
			for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
				if c == cli.Help && args[0] == "help" && args[1] == "help" {
					continue // `help help` prints the main help
				}
				code, out, errOut := runCLI(t, "", args...)
				want := "Usage: relay-baton " + c.Name
				if c == cli.Help {
					want = "relay-baton directs"
				}
				if code != 0 || !strings.HasPrefix(out, want) || errOut != "" {
					t.Errorf("%v: exit %d, stderr %q, stdout starts %q; want exit 0 and %q", args, code, errOut, head(out), want)
				}
			}
		}
	}
	for _, args := range [][]string{{}, {"--help"}, {"-h"}, {"help"}} {
		if code, out, _ := runCLI(t, "", args...); code != 0 || !strings.Contains(out, "Exit codes:") {
			t.Errorf("%v: exit %d, stdout %q", args, code, head(out))
		}
	}
}

// A bad flag or command is a usage error: exit 2 and a hint to run.
func TestBadFlagsAreUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	cases := [][]string{{"--bogus"}, {"frobnicate"}, {"help", "frobnicate"}, {"--color=sometimes", "status"}, {"hook", "install", "--bogus"}}
	for _, c := range table.Commands {
		if c != cli.Help && c != lane.Hook {
			cases = append(cases, []string{c.Name, "--no-such-flag"})
		}
	}
	for _, args := range cases {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "relay-baton: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and a message", args, code, head(out), errOut)
		}
		if args[0] != "--color=sometimes" && !strings.Contains(errOut, "\nTry: relay-baton ") {
			t.Errorf("%v: no hint in %q", args, errOut)
		}
	}
}

// hook wait is an asyncRewake hook: its exit 2 wakes the session with
// stderr as a message, so a bad flag exits 1 (said on stderr) instead.
func TestHookWaitBadFlagDoesNotExit2(t *testing.T) {
	code, _, errOut := runCLI(t, "", "hook", "wait", "--bogus")
	if code != 1 || !strings.Contains(errOut, "unknown flag: --bogus") || !strings.Contains(errOut, "hook wait --help") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// Colour through the real command path: --color=always colours a pipe;
// NO_COLOR and --color=never leave no escape code even on a terminal.
func TestColorModesEndToEnd(t *testing.T) {
	defer func(v bool) { color.NoColor = v }(color.NoColor)
	t.Setenv("NO_COLOR", "")
	os.Unsetenv("NO_COLOR")
	repo := gitRepo(t)
	if code, _, errOut := runCLI(t, "", "note", "--path", repo, "hello"); code != 0 {
		t.Fatalf("note: %d %s", code, errOut)
	}
	replay := func(tty bool, args ...string) string {
		t.Helper()
		code, out, errOut := runCLIOn(t, context.Background(), "", tty, append([]string{"replay", "--path", repo}, args...)...)
		if code != 0 || !strings.Contains(out, "hello") {
			t.Fatalf("replay %v: %d %q %q", args, code, out, errOut)
		}
		return out
	}
	if out := replay(false, "--color=always"); !strings.Contains(out, "\x1b[") {
		t.Errorf("--color=always through a pipe has no colour: %q", out)
	}
	if out := replay(false, "--color", "always"); !strings.Contains(out, "\x1b[") {
		t.Errorf("--color always (two words) has no colour: %q", out)
	}
	if out := replay(true); !strings.Contains(out, "\x1b[") {
		t.Errorf("a terminal has no colour: %q", out)
	}
	if out := replay(false); strings.Contains(out, "\x1b") {
		t.Errorf("a pipe has escape codes: %q", out)
	}
	if out := replay(true, "--color=never"); strings.Contains(out, "\x1b") {
		t.Errorf("--color=never on a terminal has escape codes: %q", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out := replay(true); strings.Contains(out, "\x1b") {
		t.Errorf("NO_COLOR=1 on a terminal has escape codes: %q", out)
	}
}

func head(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// Every help text fits in 80 columns: the main help and each command's.
func TestHelpFits80Columns(t *testing.T) {
	check := func(name, text string) {
		for _, l := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(l); n > cli.HelpWidth {
				t.Errorf("%s: line of %d columns: %q", name, n, l)
			}
		}
	}
	_, out, _ := runCLI(t, "", "--help")
	check("--help", out)
	for _, c := range table.Commands {
		_, out, _ := runCLI(t, "", c.Name, "--help")
		check(c.Name+" --help", out)
	}
	_, out, _ = runCLI(t, "", "hook", "install", "--help")
	check("hook install --help", out)
}

// A mistyped command gets a suggestion; a word close to nothing does not.
func TestCommandSuggestions(t *testing.T) {
	cases := map[string]string{
		"repaly":  `unknown command "repaly" (did you mean replay?)`,
		"stauts":  `unknown command "stauts" (did you mean status?)`,
		"re":      `unknown command "re" (did you mean replay or review?)`,
		"doctr":   `unknown command "doctr" (did you mean doctor?)`,
		"zzzzzzz": `unknown command "zzzzzzz"`,
	}
	for in, want := range cases {
		code, _, errs := runCLI(t, "", in)
		if first, _, _ := strings.Cut(errs, "\n"); code != 2 || first != "relay-baton: "+want {
			t.Errorf("%s: exit %d, stderr %q, want %q", in, code, errs, want)
		}
		// help <typo> suggests the same.
		code, _, errs = runCLI(t, "", "help", in)
		if first, _, _ := strings.Cut(errs, "\n"); code != 2 || first != "relay-baton: "+want {
			t.Errorf("help %s: exit %d, stderr %q, want %q", in, code, errs, want)
		}
	}
}

// A mistyped flag or subcommand gets a suggestion too.
func TestFlagAndSubcommandSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--jsn"}, "unknown flag: --jsn (did you mean --json?)"},
		{[]string{"replay", "--folow"}, "unknown flag: --folow (did you mean --follow?)"},
		{[]string{"status", "--zzzzzz"}, "unknown flag: --zzzzzz"},
		{[]string{"hook", "instal"}, `unknown hook "instal" (did you mean install?)`},
		// Global flags, before the command.
		{[]string{"--verison"}, "unknown flag: --verison (did you mean --version?)"},
		{[]string{"--colour=never", "status"}, "unknown flag: --colour=never (did you mean --color?)"},
		{[]string{"--zzzzzz", "status"}, "unknown flag: --zzzzzz"},
	} {
		code, _, errs := runCLI(t, "", c.args...)
		if first, _, _ := strings.Cut(errs, "\n"); code != 2 || first != "relay-baton: "+c.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errs, c.want)
		}
	}
}
