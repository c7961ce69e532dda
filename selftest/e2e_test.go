package selftest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/selftest"
)

var (
	buildOnce sync.Once
	rbPath    string
	buildErr  error
)

// relayBaton builds relay-baton once (the binary a user runs, and the one
// the CLIs' hooks run) and returns its path.
func relayBaton(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "selftest-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		rbPath = filepath.Join(dir, "relay-baton")
		if out, err := exec.Command("go", "build", "-o", rbPath, "..").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return rbPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if rbPath != "" {
		os.RemoveAll(filepath.Dir(rbPath))
	}
	os.Exit(code)
}

// The contracts selftest checks, per agent, in order.
var selftestContracts = map[string][]string{
	"claude": {"claude CLI", "allowed config flags", "stream-json output", "hook payloads", "hook environment", "exec-form hooks (args)", "Stop hook delivery", "transcript shape", "resume (--resume)", "messaging socket", "socket path rule", "session registry (agents --json)"},
	"codex":  {"codex CLI", "hook trust (app-server)", "exec --json output", "Stop hook payload", "Stop hook delivery", "rollout shape", "resume (exec resume)", "queue command line", "allowed config flags", "steer protocol (app-server)"},
}

// runSelftestJSON runs the built `relay-baton selftest` with env (laid
// over the test's) and args and returns the report (with --json), the exit
// code and everything it printed.
func runSelftestJSON(t *testing.T, env []string, args ...string) (selftest.Report, int, string) {
	t.Helper()
	cmd := exec.Command(relayBaton(t), append([]string{"selftest"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	out, errOut := stdout.String(), stderr.String()
	var rep selftest.Report
	if strings.Contains(strings.Join(args, " "), "--json") {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("selftest --json: %v\nstdout %s\nstderr %s", err, out, errOut)
		}
	}
	return rep, code, out + errOut
}

// With the CLIs the tests drive (the pinned ones, or those of
// RELAY_BATON_AGENT_BIN_DIR), every contract holds: exit 0, each check ok.
func TestSelftestPassesWithTheCLIs(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the hooks run through sh")
	}
	env := []string{"RELAY_BATON_CLAUDE=" + agenttest.ClaudeBin(t), "RELAY_BATON_CODEX=" + agenttest.CodexBin(t)}
	rep, code, out := runSelftestJSON(t, env, "--json")
	if code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, out)
	}
	got := map[string][]string{}
	for _, c := range rep.Checks {
		got[c.Agent] = append(got[c.Agent], c.Contract)
		if c.Status != selftest.OK {
			t.Errorf("%s %s: %s: %s", c.Agent, c.Contract, c.Status, c.Detail)
		}
	}
	for agent, want := range selftestContracts {
		if strings.Join(got[agent], "|") != strings.Join(want, "|") {
			t.Errorf("%s contracts checked: %q, want %q", agent, got[agent], want)
		}
	}
	if len(rep.CLIs) != 2 || rep.CLIs[0].Version == "" || rep.CLIs[1].Version == "" {
		t.Errorf("clis %+v", rep.CLIs)
	}
}

// wrapper writes an executable sh script at dir/name running real with
// its arguments, its standard output passed through filter (a sed
// program).
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func wrapper(t *testing.T, dir, name, real, filter string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	script := "#!/bin/sh\n" + shq(real) + ` "$@" | sed -e ` + shq(filter) + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A CLI whose output lost a field relay-baton reads is reported on its
// contract's line as changed, with what is missing, and selftest exits 1:
// claude without session_id in its stream-json, codex without its
// thread.started line.
func TestSelftestReportsAChangedContract(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the wrappers are sh scripts")
	}
	dir := t.TempDir()
	// Their --help also lost a flag a trusted .relay-baton.json may pass.
	claude := wrapper(t, dir, "claude", agenttest.ClaudeBin(t), `s/"session_id":"[^"]*",\{0,1\}//g;s/--fallback-model </--fallback-models </`)
	codex := wrapper(t, dir, "codex", agenttest.CodexBin(t), `/"thread.started"/d;s/-m, --model </--the-model </`)
	_, code, out := runSelftestJSON(t, []string{"RELAY_BATON_CLAUDE=" + claude, "RELAY_BATON_CODEX=" + codex})
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []selftest.Check{
		{Agent: "claude", Contract: "stream-json output", Status: selftest.Changed, Detail: "no session id (system init / result line)"},
		{Agent: "codex", Contract: "exec --json output", Status: selftest.Changed, Detail: "no thread id (thread.started)"},
		{Agent: "claude", Contract: "hook payloads", Status: selftest.Skipped, Detail: "the run reported no session id"},
		{Agent: "claude", Contract: "allowed config flags", Status: selftest.Changed, Detail: "claude --help no longer lists --fallback-model"},
		{Agent: "codex", Contract: "allowed config flags", Status: selftest.Changed, Detail: "codex exec --help no longer lists --model, -m"},
	} {
		// The detail lists every problem found; this one among them.
		line := fmt.Sprintf("%-6s  %-27s  %s: ", want.Agent, want.Contract, want.Status)
		if !strings.Contains(out, line) || !strings.Contains(out, want.Detail) {
			t.Errorf("no line %q in\n%s", line+want.Detail, out)
		}
	}
	if !strings.Contains(out, "A changed contract means relay-baton may not work with this CLI version") {
		t.Errorf("no advice after the lines:\n%s", out)
	}
}

// The versions selftest names as tested are the pins.
func TestSelftestTestedAreThePins(t *testing.T) {
	b, err := os.ReadFile("../.ci/agent-clis.txt")
	if err != nil {
		t.Fatal(err)
	}
	for agent, pin := range selftest.Tested {
		if !strings.Contains(string(b), "\n"+pin+"\n") {
			t.Errorf("selftest.Tested[%s] = %s is not pinned in .ci/agent-clis.txt:\n%s", agent, pin, b)
		}
	}
}
