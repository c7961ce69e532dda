package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/cli"
)

// serve outside a git repository says to pass --path: serve takes --path
// (and still --workspace), and the message it prints names it.
func TestServeTakesThePathItsMessageNames(t *testing.T) {
	dir := t.TempDir() // not a repository
	_, help, _ := runCLI(t, "", "serve", "--help")
	if !strings.Contains(help, "--path string") || !strings.Contains(help, "Usage: relay-baton serve [--port N] [--open] [--path DIR]") {
		t.Fatalf("serve --help does not offer --path:\n%s", help)
	}
	for _, flag := range []string{"--path", "--workspace"} {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb lockedBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--port", "0", flag, dir}, &cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb})
		}()
		deadline := time.After(60 * time.Second) // a hang guard, not a bound
	wait:
		for !strings.Contains(out.String(), "(workspace "+dir+")") || !strings.Contains(errb.String(), "no Agent Room timeline") {
			select {
			case code := <-done:
				cancel()
				t.Fatalf("serve %s %s ended (exit %d) before serving: %q %q", flag, dir, code, out.String(), errb.String())
			case <-deadline:
				break wait
			case <-time.After(10 * time.Millisecond):
			}
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("serve %s: exit %d, stderr %q", flag, code, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, "pass --path") {
			t.Fatalf("serve %s outside a repository: %q, want the advice to pass --path", flag, msg)
		}
	}
}

// The loop of 'continue' does not take --continue; plan, execute and
// handoff, which start one agent's conversation, do.
func TestContinueDoesNotOfferContinue(t *testing.T) {
	_, help, _ := runCLI(t, "", "continue", "--help")
	if strings.Contains(help, "--continue") {
		t.Fatalf("continue --help offers --continue:\n%s", help)
	}
	if code, _, errs := runCLI(t, "", "continue", "--continue"); code != 2 || !strings.Contains(errs, "unknown flag: --continue") {
		t.Fatalf("continue --continue: exit %d, %q", code, errs)
	}
	for _, c := range []string{"plan", "execute", "handoff"} {
		if _, help, _ := runCLI(t, "", c, "--help"); !strings.Contains(help, "--continue") {
			t.Errorf("%s --help lacks --continue", c)
		}
	}
}

// version --json prints every field its --help names (modified included,
// false or true); revision and time are documented as present only when
// Go stamped them.
func TestVersionJSONPrintsWhatItDocuments(t *testing.T) {
	code, out, _ := runCLI(t, "", "version", "--json")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("version --json: exit %d, %q", code, out)
	}
	for _, k := range []string{"version", "modified", "go"} {
		if _, ok := v[k]; !ok {
			t.Errorf("version --json lacks %q: %s", k, out)
		}
	}
	_, help, _ := runCLI(t, "", "version", "--help")
	if !strings.Contains(help, "modified") || !strings.Contains(strings.Join(strings.Fields(help), " "), "revision and time only when Go stamped them") {
		t.Fatalf("version --help: %s", help)
	}
}

// Every exit code relay-baton returns is in --help: 4 (an agent run
// failed) included.
func TestHelpListsEveryExitCode(t *testing.T) {
	_, out, _ := runCLI(t, "", "--help")
	_, codes, _ := strings.Cut(out, "Exit codes:")
	for _, want := range []string{"\n  0  success", "\n  1  runtime failure", "\n  2  usage error", "\n  4  an agent run failed"} {
		if !strings.Contains(codes, want) {
			t.Errorf("--help's exit codes lack %q:\n%s", want, codes)
		}
	}
}

// doctor (and so /diagnose) says each agent's login state with the fix:
// here both real CLIs, in a fresh HOME, are logged out.
func TestDoctorReportsLoggedOutAgents(t *testing.T) {
	claude, codex := agenttest.ClaudeBin(t), agenttest.CodexBin(t)
	home := t.TempDir()
	codexHome := filepath.Join(home, "codex-home")
	os.MkdirAll(codexHome, 0o700)
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	t.Setenv("CODEX_HOME", codexHome)
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("RELAY_BATON_CLAUDE", claude)
	t.Setenv("RELAY_BATON_CODEX", codex)
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY"} {
		t.Setenv(k, "")
	}
	dir := roomRepo(t)
	for _, args := range [][]string{{"doctor", "--path", dir}, {"doctor", "--deep", "--path", dir}} {
		code, out, _ := runCLI(t, "", args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1 (a failed check)", args, code)
		}
		for _, want := range []string{
			"fail claude login           not logged in: run `claude` in a terminal of its own and type /login",
			"fail codex login            not logged in: run `codex login` in a terminal",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in\n%s", args, want, out)
			}
		}
	}
}

// A Claude Code session is reached by its messaging socket without
// hooks: send's help and hook install's adoption note say so instead of
// calling a session started before the install unreachable.
func TestSendAndHookInstallNameTheSocketLane(t *testing.T) {
	_, help, _ := runCLI(t, "", "send", "--help")
	if !strings.Contains(help, "messaging socket (no hooks needed)") {
		t.Fatalf("send --help does not name the socket lane:\n%s", help)
	}
	code, out, errOut := runCLI(t, "", "hook", "install", "--workspace", t.TempDir())
	if code != 0 || strings.Contains(out, "not chat-capable") || !strings.Contains(out, "reached by its messaging socket alone") {
		t.Fatalf("hook install's adoption note (exit %d, %q):\n%s", code, errOut, out)
	}
}

// A list of runs shapes no prompt: `runs --help` does not offer --diet.
func TestRunsDoesNotOfferDiet(t *testing.T) {
	_, help, _ := runCLI(t, "", "runs", "--help")
	if strings.Contains(help, "--diet") || !strings.Contains(help, "--json") {
		t.Fatalf("runs --help:\n%s", help)
	}
}

// A mistyped flag reads the same before and after the command's name.
func TestUnknownFlagWordsAreOne(t *testing.T) {
	_, _, global := runCLI(t, "", "--bogus")
	_, _, sub := runCLI(t, "", "targets", "--bogus")
	if !strings.Contains(global, "unknown flag: --bogus") || !strings.Contains(sub, "unknown flag: --bogus") {
		t.Fatalf("global %q, subcommand %q", global, sub)
	}
}
