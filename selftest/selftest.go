// Package selftest checks the installed claude and codex CLIs against the
// contracts relay-baton depends on: it runs each one, as relay-baton
// resolves it for real runs, against a loopback mock model API (package
// mockapi) in a temporary HOME and CODEX_HOME, and reads what the CLI
// printed, what its hooks received and what it wrote to disk with
// relay-baton's own parsers. A user runs it after upgrading a CLI.
//
// It never touches the user's real HOME, sessions or settings (every
// folder a CLI reads or writes is a temporary one, removed at the end), and
// needs no network: the only server is the mock on 127.0.0.1. Each CLI
// step is bounded by Options.Step.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/mockapi"
	"github.com/relay-baton/relay-baton/subprocess"
)

// Status is the outcome of one contract check.
type Status string

// The statuses: ok (as relay-baton expects), changed (the CLI no longer
// does what relay-baton relies on: Detail says what), skipped (not checked:
// Detail says why).
const (
	OK      Status = "ok"
	Changed Status = "changed"
	Skipped Status = "skipped"
)

// Check is one contract and what was found.
type Check struct {
	Agent    string `json:"agent"`    // claude or codex
	Contract string `json:"contract"` // e.g. "stream-json output"
	Status   Status `json:"status"`
	Detail   string `json:"detail,omitempty"`
}

// CLI is one agent CLI as found.
type CLI struct {
	Agent   string `json:"agent"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
}

// Report is the whole outcome.
type Report struct {
	CLIs   []CLI   `json:"clis"`
	Checks []Check `json:"checks"`
	Dir    string  `json:"dir,omitempty"` // the temporary folder, when Options.Keep
}

// Broken counts the checks that found a changed contract.
// Checked counts the contracts that were checked (ok or changed): none
// when no CLI could be run.
func (r Report) Checked() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == OK || c.Status == Changed {
			n++
		}
	}
	return n
}

func (r Report) Broken() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == Changed {
			n++
		}
	}
	return n
}

// Options configure Run.
type Options struct {
	// Self is the relay-baton binary the CLIs' hooks run (its hook
	// recorder, see RecordHook); "" = os.Executable().
	Self string
	// Env is laid over relay-baton's environment when the CLIs are
	// resolved and run (tests point RELAY_BATON_CLAUDE / RELAY_BATON_CODEX
	// here); the folders and the model API are always selftest's own.
	Env []string
	// Step bounds each CLI run (a hang guard); 0 = DefaultStep.
	Step time.Duration
	// Agents limits the run to these agents (nil = claude and codex).
	Agents []string
	// OnCheck, when set, is called as each check finishes.
	OnCheck func(Check)
	// Keep leaves the temporary folder in place (for a look at what the
	// CLIs wrote) and names it in Report.Dir.
	Keep bool
}

// DefaultStep bounds one CLI run: generous, a run against the mock takes
// a few seconds.
const DefaultStep = 120 * time.Second

// Run checks every contract of each agent CLI and returns the report. It
// returns an error only when it cannot set up (no temporary folder, no
// loopback port); a CLI that is missing or misbehaves is a check's status.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Step <= 0 {
		o.Step = DefaultStep
	}
	if o.Self == "" {
		self, err := os.Executable()
		if err != nil {
			return Report{}, fmt.Errorf("selftest: cannot find relay-baton's own binary for the hooks: %w", err)
		}
		o.Self = self
	}
	root, err := os.MkdirTemp("", "relay-baton-selftest-")
	if err != nil {
		return Report{}, fmt.Errorf("selftest: temporary folder: %w", err)
	}
	// The CLIs see the resolved path (macOS's /var -> /private/var): the
	// payloads' cwd and paths are compared with it.
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	var rep Report
	if o.Keep {
		rep.Dir = root
	} else {
		defer os.RemoveAll(root)
	}
	add := func(c Check) {
		rep.Checks = append(rep.Checks, c)
		if o.OnCheck != nil {
			o.OnCheck(c)
		}
	}
	want := func(agent string) bool {
		if len(o.Agents) == 0 {
			return true
		}
		for _, a := range o.Agents {
			if a == agent {
				return true
			}
		}
		return false
	}
	if want("claude") {
		cli, err := checkClaude(ctx, o, filepath.Join(root, "claude"), add)
		if err != nil {
			return rep, err
		}
		rep.CLIs = append(rep.CLIs, cli)
	}
	if want("codex") {
		cli, err := checkCodex(ctx, o, filepath.Join(root, "codex"), add)
		if err != nil {
			return rep, err
		}
		rep.CLIs = append(rep.CLIs, cli)
	}
	return rep, nil
}

// cliVersion runs `bin --version` (bounded) and returns its first line.
func cliVersion(ctx context.Context, bin string, env []string, step time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	out, err := subprocess.Output(ctx, cliCommand(bin, env, "--version"))
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// scriptAnswers has a mock API answer each of selftest's prompts (a
// message delivered by a hook, a resumed turn, the socket's run, the first
// run) with its one line.
func scriptAnswers(mock interface{ When(string, mockapi.Step) }) {
	mock.When("SELFTEST-CHAT", mockapi.Reply(mockapi.Text(chatAnswer)))
	mock.When("SELFTEST-RESUME", mockapi.Reply(mockapi.Text(resumeAnswer)))
	mock.When("SELFTEST-SOCKET", mockapi.Reply(mockapi.Text(firstAnswer)))
	mock.When("SELFTEST-FIRST", mockapi.Reply(mockapi.Text(firstAnswer)))
}

// checksOf is the checkFunc that adds agent's checks.
func checksOf(agent string, add func(Check)) checkFunc {
	return func(contract string, st Status, format string, a ...any) {
		add(Check{Agent: agent, Contract: contract, Status: st, Detail: fmt.Sprintf(format, a...)})
	}
}

// findCLI resolves cli's agent as relay-baton does for a real run in work
// and reads its version: the "<agent> CLI" check. ok is false when the CLI
// cannot be run (the check says why).
func findCLI(ctx context.Context, c checkFunc, cli *CLI, work string, env []string, step time.Duration) (inv agents.Invocation, ok bool) {
	name := cli.Agent + " CLI"
	inv, err := agents.Prepare(agents.Request{Agent: cli.Agent, Role: agents.RoleAsk, Prompt: "x", Dir: work, Env: env})
	if err != nil {
		why := err.Error()
		if !errors.Is(err, agents.ErrNotFound) {
			why = "cannot prepare a run: " + why
		}
		c(name, Skipped, "%s", why)
		return inv, false
	}
	cli.Path = inv.Path
	v, err := cliVersion(ctx, inv.Path, inv.Env, step)
	if err != nil {
		c(name, Changed, "%v", err)
		return inv, false
	}
	cli.Version = v
	c(name, OK, "%s at %s", v, inv.Path)
	return inv, true
}

// cliCommand runs bin with args in env; its output is awaited two seconds
// at most once it exited.
func cliCommand(bin string, env []string, args ...string) subprocess.Cmd {
	cmd := subprocess.Command(bin, args...)
	cmd.Env, cmd.Grace = env, 2*time.Second
	return cmd
}

// isolated are the variables laid over relay-baton's environment for every
// CLI run: the CLIs' folders are temporary ones, the model API is the mock,
// nothing updates itself, and no setting of the user's that picks another
// provider, model, proxy or config folder reaches the run.
func isolated(home, tmp string) []string {
	return []string{
		"HOME=" + home,
		"USERPROFILE=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"CODEX_HOME=" + filepath.Join(home, ".codex"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"TMPDIR=" + tmp,
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_USE_BEDROCK=", "CLAUDE_CODE_USE_VERTEX=", "CLAUDE_CODE_USE_FOUNDRY=",
		"ANTHROPIC_MODEL=", "ANTHROPIC_SMALL_FAST_MODEL=", "ANTHROPIC_CUSTOM_HEADERS=",
		"ANTHROPIC_API_KEY=", "ANTHROPIC_AUTH_TOKEN=", "OPENAI_API_KEY=", "CODEX_API_KEY=",
		"HTTP_PROXY=", "HTTPS_PROXY=", "ALL_PROXY=", "http_proxy=", "https_proxy=", "all_proxy=",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"CLAUDE_CODE_SESSION_ID=", "CLAUDE_PROJECT_DIR=", "CLAUDECODE=",
		"CLAUDE_CODE_MESSAGING_SOCKET=", "CLAUDE_CODE_MESSAGING_TOKEN=",
	}
}

// mkdirs makes each folder (0700).
func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("selftest: %w", err)
		}
	}
	return nil
}

// writeFile writes a new file of selftest's own folder (0600).
func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	return nil
}

// lay appends over to base: a later KEY=VALUE wins when the list is used
// as an environment by agents.Run (Request.Env) or laid over os.Environ().
func lay(base []string, over ...string) []string {
	out := make([]string, 0, len(base)+len(over))
	out = append(out, base...)
	return append(out, over...)
}

// cut shortens s to one line of at most n bytes, for a check's detail.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Tested are the CLI versions this relay-baton was tested with: the pins of
// .ci/agent-clis.txt (a test keeps the two the same).
var Tested = map[string]string{
	"claude": "@anthropic-ai/claude-code@2.1.332",
	"codex":  "@openai/codex@0.171.0",
}
