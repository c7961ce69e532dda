package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/cli/clitest"
	"github.com/relay-baton/relay-baton/cmd/lane"
	"github.com/relay-baton/relay-baton/events"
)

// writeScript writes `relay-baton completion <shell>` to a file.
func writeScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errs := runCLI(t, "", "completion", shell)
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
		{[]string{"relay-baton", "hook", ""}, lane.Hook.Subcommands},
		{[]string{"relay-baton", "hook", "install", "--scope", ""}, []string{"project", "local", "user"}},
		{[]string{"relay-baton", "chat", "--agent", ""}, []string{"claude", "codex", "orchestrator"}},
		{[]string{"relay-baton", "room", "--re"}, []string{"--resume", "--recap"}},
		{[]string{"relay-baton", "help", "comp"}, []string{"completion"}},
		{[]string{"relay-baton", "completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
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
	for _, c := range table.Commands {
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
	if !slices.Equal(got[0], table.VisibleNames()) || slices.Contains(got[0], "__complete") {
		t.Errorf("commands: %q, want %q", got[0], table.VisibleNames())
	}
	for i, c := range cmds {
		if c == cli.Help {
			continue // its --help is the main help
		}
		_, help, _ := runCLI(t, "", c.Name, "--help")
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
	for _, sub := range lane.Hook.Subcommands {
		code, out, errs := runCLI(t, "", "hook", sub, "--help")
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

// pwshTable is the JSON table inside the PowerShell script.
type pwshTable struct {
	Commands []struct{ W, D string } `json:"commands"`
	Keys     map[string]string       `json:"keys"`
	Specs    map[string]struct {
		Flags  []struct{ W, D string } `json:"flags"`
		Valued []string                `json:"valued"`
		Args   []string                `json:"args"`
		Sub    bool                    `json:"sub"`
	} `json:"specs"`
	Values map[string]struct {
		Vals []string `json:"vals"`
		Dyn  string   `json:"dyn"`
	} `json:"values"`
}

// The PowerShell script carries the same table as the bash one: the same
// commands and aliases, for every command the same flags, the same flag
// values; its data is one JSON line inside a single-quoted here-string,
// which nothing in the table can end early. (pwsh, when installed, loads
// it in TestPowerShellCompletionRuns.)
func TestPowerShellCompletionFollowsTheTable(t *testing.T) {
	code, script, errs := runCLI(t, "", "completion", "powershell")
	if code != 0 || errs != "" {
		t.Fatalf("completion powershell: exit %d, stderr %q", code, errs)
	}
	head, rest, ok := strings.Cut(script, "    $t = @'\n")
	if !ok || !strings.Contains(head, "\nRegister-ArgumentCompleter -Native -CommandName relay-baton, relay-baton.exe -ScriptBlock {\n") {
		t.Fatalf("no completer registered, or no table:\n%s", head)
	}
	data, body, ok := strings.Cut(rest, "\n'@ | ConvertFrom-Json\n")
	if !ok || strings.Contains(data, "\n") || strings.Contains(body, "'@") {
		t.Fatalf("the table is not one line ending the here-string")
	}
	code0 := head + body
	if strings.Count(code0, "{") != strings.Count(code0, "}") || strings.Count(code0, "(") != strings.Count(code0, ")") || !strings.HasSuffix(body, "\n}\n") {
		t.Errorf("unbalanced braces or parentheses outside the table")
	}
	var d pwshTable
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		t.Fatalf("table: %v", err)
	}

	// Commands and aliases: the bash script's list, each with a key.
	bashScript := writeScript(t, "bash")
	var cmds []string
	for _, c := range d.Commands {
		cmds = append(cmds, c.W)
		if d.Keys[c.W] == "" {
			t.Errorf("command %s has no key", c.W)
		}
	}
	lines := [][]string{{"relay-baton", ""}}
	var keys []string
	for _, c := range table.Commands {
		if !c.Hidden {
			lines = append(lines, []string{"relay-baton", c.Name, "-"})
			keys = append(keys, c.Name)
		}
	}
	for _, sub := range lane.Hook.Subcommands {
		lines = append(lines, []string{"relay-baton", "hook", sub, "-"})
		keys = append(keys, "hook "+sub)
	}
	got := complete(t, bashScript, lines...)
	checked := 0
	if !slices.Equal(cmds, got[0]) {
		t.Errorf("commands: powershell %q, bash %q", cmds, got[0])
	}
	if d.Keys["room"] != "chat" {
		t.Errorf("the alias room is %q, want chat", d.Keys["room"])
	}
	// Every command's flags (long and short), as bash offers them.
	for i, key := range keys {
		var flags []string
		for _, f := range d.Specs[key].Flags {
			flags = append(flags, f.W)
		}
		slices.Sort(flags)
		want := slices.Clone(got[i+1])
		slices.Sort(want)
		if !slices.Equal(flags, want) {
			t.Errorf("%s: powershell flags %q, bash %q", key, flags, want)
		}
		checked += len(flags)
	}
	if checked < 60 {
		t.Errorf("only %d flags compared: the check is not reading the tables", checked)
	}
	// Flag values and subcommands.
	var kinds []string
	for _, k := range events.Kinds {
		kinds = append(kinds, string(k))
	}
	for _, c := range []struct {
		key  string
		want []string
		dyn  string
	}{
		{"replay --kind", kinds, ""},
		{"replay --session", nil, "replay-sessions"},
		{"send --session", nil, "sessions"},
		{"hook install --scope", []string{"project", "local", "user"}, ""},
		{"chat --agent", []string{"claude", "codex", "orchestrator"}, ""},
		{"* --color", []string{"auto", "always", "never"}, ""},
		{"--color", []string{"auto", "always", "never"}, ""},
	} {
		v, ok := d.Values[c.key]
		if !ok || !slices.Equal(v.Vals, c.want) && len(c.want) > 0 || v.Dyn != c.dyn {
			t.Errorf("%s: values %q %q, want %q %q", c.key, v.Vals, v.Dyn, c.want, c.dyn)
		}
	}
	if h := d.Specs["hook"]; !h.Sub || !slices.Equal(h.Args, lane.Hook.Subcommands) {
		t.Errorf("hook: sub %v args %q", h.Sub, h.Args)
	}
	if !slices.Contains(d.Specs["hook install"].Valued, "--scope") {
		t.Errorf("hook install: --scope does not take a value: %q", d.Specs["hook install"].Valued)
	}
}

// pwsh, where it is installed, loads the script and its completer answers
// through TabExpansion2 as at a prompt. Debian has no PowerShell package,
// so .ci/run does not install it and this test skips without it, CI or not.
func TestPowerShellCompletionRuns(t *testing.T) {
	if _, err := exec.LookPath("pwsh"); err != nil {
		t.Skip("pwsh is not installed (Debian packages no PowerShell; TestPowerShellCompletionFollowsTheTable checks the script)")
	}
	script := writeScript(t, "powershell")
	drv := ". " + "'" + strings.ReplaceAll(script, "'", "''") + "'\n" +
		"foreach ($l in @('relay-baton re', 'relay-baton replay --kind ', 'relay-baton hook install --sc', 'relay-baton --verb', 'relay-baton room --ag')) {\n" +
		"  (TabExpansion2 -inputScript $l -cursorColumn $l.Length).CompletionMatches | ForEach-Object { $_.CompletionText } | Join-String -Separator ' '\n}\n"
	cmd := exec.Command("pwsh", "-NoProfile", "-NonInteractive", "-Command", drv)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pwsh: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	// One line per input line; replay --kind offers every kind.
	if len(got) != 5 || got[0] != "replay review" || !strings.HasPrefix(got[1], "agent_run ") || got[2] != "--scope" || got[3] != "--version" || got[4] != "--agent" {
		t.Errorf("pwsh completions:\n%s", out)
	}
}
