package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/cli/clitest"
	"github.com/relay-baton/relay-baton/events"
)

// writeScript writes `relay-baton completion <shell>` to a file.
func writeScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errs := runCLI(t, false, "completion", shell)
	if code != 0 || errs != "" || out == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errs)
	}
	p := filepath.Join(t.TempDir(), "relay-baton."+shell)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// complete runs the bash script and returns what it offers for each line.
func complete(t *testing.T, script string, lines ...[]string) [][]string {
	t.Helper()
	return clitest.BashComplete(t, script, lines...)
}

func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed for the completion test")
	}
	script := writeScript(t, "bash")
	var kinds []string
	for _, k := range events.Kinds {
		kinds = append(kinds, string(k))
	}
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{"relay-baton", "re"}, []string{"replay", "review"}},
		{[]string{"relay-baton", "replay", "--kind", ""}, kinds},
		{[]string{"relay-baton", "replay", "--kind", "review,ag"}, []string{"review,agent_run"}},
		{[]string{"relay-baton", "replay", "--limit", "5", "--ro"}, []string{"--role"}},
		{[]string{"relay-baton", "--color", ""}, []string{"auto", "always", "never"}},
		{[]string{"relay-baton", "status", "--color", "=", "n"}, []string{"never"}},
		{[]string{"relay-baton", "--color", "never", "tar"}, []string{"targets"}},
		{[]string{"relay-baton", "hook", ""}, cli.Hook.Subcommands},
		{[]string{"relay-baton", "hook", "install", "--scope", ""}, []string{"project", "local", "user"}},
		{[]string{"relay-baton", "chat", "--agent", ""}, []string{"claude", "codex", "orchestrator"}},
		{[]string{"relay-baton", "room", "--re"}, []string{"--resume", "--recap"}},
		{[]string{"relay-baton", "help", "comp"}, []string{"completion"}},
		{[]string{"relay-baton", "completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"relay-baton", "frobnicate", ""}, nil},
	}
	var lines [][]string
	for _, c := range cases {
		lines = append(lines, c.words)
	}
	for i, got := range complete(t, script, lines...) {
		want := cases[i].want
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", strings.Join(cases[i].words, " "), got, want)
		}
	}
}

// The script is generated from the commands table: every visible command
// and alias is offered, and for every command the flags its --help lists.
func TestCompletionFollowsTheTable(t *testing.T) {
	script := writeScript(t, "bash")
	lines := [][]string{{"relay-baton", ""}}
	var cmds []*cli.Command
	for _, c := range cli.RelayBaton.Commands {
		if !c.Hidden {
			lines = append(lines, []string{"relay-baton", c.Name, "--"})
			cmds = append(cmds, c)
		}
	}
	got := complete(t, script, lines...)
	checked := 0
	defer func() {
		if checked < 40 {
			t.Errorf("only %d flags found in the commands' --help: the check is not reading them", checked)
		}
	}()
	if !slices.Equal(got[0], cli.RelayBaton.VisibleNames()) || slices.Contains(got[0], "__complete") {
		t.Errorf("commands: %q, want %q", got[0], cli.RelayBaton.VisibleNames())
	}
	for i, c := range cmds {
		if c == cli.Help {
			continue // its --help is the main help
		}
		_, help, _ := runCLI(t, false, c.Name, "--help")
		_, flagsPart, _ := strings.Cut(help, "\nFlags:\n")
		for _, l := range strings.Split(flagsPart, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || !strings.HasPrefix(f[0], "-") || len(l)-len(strings.TrimLeft(l, " ")) > 6 {
				// not a flag's line (a wrapped description goes deeper)
				continue
			}
			flag := strings.TrimSuffix(f[0], ",")
			if len(f) > 1 && strings.HasPrefix(f[1], "--") {
				flag = f[1] // "-f, --follow"
			}
			flag, _, _ = strings.Cut(flag, "[")
			checked++
			if strings.HasPrefix(flag, "--") && !slices.Contains(got[i+1], flag) {
				t.Errorf("%s: --help lists %s, completion offers %q", c.Name, flag, got[i+1])
			}
		}
	}
}

// hook's Subcommands are the ones its Run dispatches.
func TestSubcommandsDispatch(t *testing.T) {
	for _, sub := range cli.Hook.Subcommands {
		code, out, errs := runCLI(t, false, "hook", sub, "--help")
		if code != 0 || !strings.HasPrefix(out, "Usage: relay-baton hook "+sub) {
			t.Errorf("hook %s --help: exit %d %q %q", sub, code, head(out), errs)
		}
	}
}

// zsh and fish load their scripts; fish's own completion engine answers.
func TestZshFishCompletion(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		if _, err := exec.LookPath(shell); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs it)", shell)
			}
			t.Logf("%s not installed: skipped", shell)
			continue
		}
		script := writeScript(t, shell)
		var cmd *exec.Cmd
		if shell == "zsh" {
			cmd = exec.Command("zsh", "-f", "-c", "autoload -U compinit && compinit -u -d "+shq(filepath.Join(t.TempDir(), "zcd"))+" && source "+shq(script)+" && whence -w _relay_baton")
		} else {
			cmd = exec.Command("fish", "--no-config", "-c", "source "+shq(script)+"; complete -C 'relay-baton re'; complete -C 'relay-baton replay --kind '")
		}
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", shell, err, out)
		}
		s := string(out)
		if shell == "zsh" && !strings.Contains(s, "_relay_baton: function") {
			t.Errorf("zsh: %s", s)
		}
		if shell == "fish" && (!strings.Contains(s, "replay\t") || !strings.Contains(s, "review\t") || !strings.Contains(s, "agent_run\t") || strings.Contains(s, "status\tShow")) {
			t.Errorf("fish:\n%s", s)
		}
	}
}

// shq quotes s for a POSIX shell, always.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
