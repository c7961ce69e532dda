package agents_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// collector gathers activities from OnActivity.
type collector struct {
	mu   sync.Mutex
	acts []events.Activity
	on   func(events.Activity)
}

func (c *collector) add(a events.Activity) {
	c.mu.Lock()
	c.acts = append(c.acts, a)
	on := c.on
	c.mu.Unlock()
	if on != nil {
		on(a)
	}
}

func (c *collector) all() []events.Activity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]events.Activity(nil), c.acts...)
}

func (c *collector) find(kind events.ActivityKind, match func(events.Activity) bool) (events.Activity, bool) {
	for _, a := range c.all() {
		if a.Kind == kind && (match == nil || match(a)) {
			return a, true
		}
	}
	return events.Activity{}, false
}

// groupAlive lists the pids still in process group pgid, and of any process
// whose command line contains marker.
func groupAlive(t *testing.T, pgid int, marker string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces; cut after ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cl := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if f[2] == strconv.Itoa(pgid) || (marker != "" && strings.Contains(cl, marker)) {
			out = append(out, strconv.Itoa(pid)+" "+cl)
		}
	}
	return out
}

// goneGuard is how long a test waits for a process group to be gone: a
// hang guard, not a bound (stopping takes milliseconds), and shorter than
// the probes' sleeps (58-59 s), so a process that survived is still
// there to be found.
const goneGuard = 45 * time.Second

func waitGone(t *testing.T, pgid int, marker string, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := groupAlive(t, pgid, marker)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMissingBinary(t *testing.T) {
	dir := t.TempDir()
	for _, agent := range []string{agents.Claude, agents.Codex} {
		env := agents.ClaudeBinEnv
		pkg := "@anthropic-ai/claude-code"
		if agent == agents.Codex {
			env, pkg = agents.CodexBinEnv, "@openai/codex"
		}
		req := agents.Request{Agent: agent, Role: agents.RolePlanner, Prompt: "hi", Dir: dir,
			Env: []string{env + "=/nonexistent/bin/" + agent}}
		_, err := agents.Prepare(req)
		if !errors.Is(err, agents.ErrNotFound) {
			t.Fatalf("%s: Prepare err = %v, want ErrNotFound", agent, err)
		}
		res := agents.Run(context.Background(), req)
		if !errors.Is(res.Err, agents.ErrNotFound) || res.ExitCode != -1 {
			t.Fatalf("%s: Run = %+v", agent, res)
		}
		if strings.Contains(res.Summary, "\n") || !strings.Contains(res.Summary, "npm install -g "+pkg) || !strings.Contains(res.Summary, env) {
			t.Fatalf("%s: summary %q should be one line naming the install command and %s", agent, res.Summary, env)
		}
		// Not on PATH either.
		req.Env = []string{env + "=", "PATH=" + t.TempDir()}
		if _, err := agents.Prepare(req); !errors.Is(err, agents.ErrNotFound) || !strings.Contains(err.Error(), "npm install -g "+pkg) || !strings.Contains(err.Error(), "on PATH") {
			t.Fatalf("%s: empty PATH: %v", agent, err)
		}
	}
}

func TestPrepareArgvAndPolicy(t *testing.T) {
	dir := t.TempDir()
	bin := self(t)
	cases := []struct {
		agent   string
		role    agents.Role
		want    []string
		without []string
	}{
		{agents.Claude, agents.RolePlanner, []string{"-p", "--output-format stream-json", "--verbose", "--permission-mode plan", "--disallowedTools Write,Edit,NotebookEdit", "-- -rm -rf"}, []string{"acceptEdits"}},
		{agents.Claude, agents.RoleReviewer, []string{"--permission-mode plan"}, []string{"acceptEdits"}},
		{agents.Claude, agents.RoleAsk, []string{"--permission-mode plan"}, []string{"acceptEdits"}},
		{agents.Claude, agents.RoleExecutor, []string{"--permission-mode acceptEdits", "--allowedTools Bash"}, []string{"plan"}},
		{agents.Codex, agents.RoleExecutor, []string{"exec --json", "--sandbox workspace-write", "-C " + dir, "-- -rm -rf"}, []string{"read-only", "--full-auto", "--skip-git-repo-check"}},
		{agents.Codex, agents.RolePlanner, []string{"--sandbox read-only"}, []string{"workspace-write"}},
	}
	for _, c := range cases {
		inv, err := agents.Prepare(agents.Request{Agent: c.agent, Role: c.role, Prompt: "-rm -rf", Dir: dir,
			Env: []string{agents.ClaudeBinEnv + "=" + bin, agents.CodexBinEnv + "=" + bin}})
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Join(inv.Argv, " ")
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s %s: argv %q lacks %q", c.agent, c.role, line, w)
			}
		}
		for _, w := range c.without {
			if strings.Contains(line, w) {
				t.Errorf("%s %s: argv %q has %q", c.agent, c.role, line, w)
			}
		}
		if inv.Argv[len(inv.Argv)-1] != "-rm -rf" || inv.Argv[len(inv.Argv)-2] != "--" {
			t.Errorf("prompt must be one argv element after --: %q", inv.Argv)
		}
		if inv.Path != bin || inv.Policy == "" || inv.Timeout != agents.DefaultTimeout {
			t.Errorf("%s %s: path %q policy %q timeout %v", c.agent, c.role, inv.Path, inv.Policy, inv.Timeout)
		}
	}
	if _, err := agents.Prepare(agents.Request{Agent: "gemini", Role: agents.RolePlanner, Dir: dir}); err == nil {
		t.Error("unknown agent accepted")
	}
	if _, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: "boss", Dir: dir}); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestPrepareUsesConfig(t *testing.T) {
	dir := t.TempDir()
	agenttest.WriteRepoConfig(t, dir, agenttest.RepoConfig{ClaudeArgs: []string{"--model", "opus"}, CodexArgs: []string{"-c", "model_reasoning_effort=high"}, Timeout: "45m"})
	inv, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "p", Dir: dir, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}})
	if err != nil || strings.Contains(strings.Join(inv.Argv, " "), "opus") || inv.Timeout != agents.DefaultTimeout || inv.Extra != nil ||
		!strings.Contains(inv.ConfigIgnored, "relay-baton trust") {
		t.Fatalf("an untrusted config was used: argv %q timeout %v ignored %q err %v", inv.Argv, inv.Timeout, inv.ConfigIgnored, err)
	}
	if _, err := agents.TrustConfig(dir); err != nil {
		t.Fatal(err)
	}
	inv, err = agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "p", Dir: dir, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(inv.Argv, " "), "--model opus -- p") || inv.Timeout != 45*time.Minute ||
		strings.Join(inv.Extra, " ") != "--model opus" || inv.ConfigIgnored != "" {
		t.Fatalf("argv %q extra %q timeout %v ignored %q", inv.Argv, inv.Extra, inv.Timeout, inv.ConfigIgnored)
	}
	inv, err = agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "p", Dir: dir, Timeout: time.Second, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}})
	if err != nil || inv.Timeout != time.Second {
		t.Fatalf("request timeout should win: %v %v", inv.Timeout, err)
	}
	// The user's own config (in the config folder) may add more; the
	// invocation says which arguments come from where.
	ucfg, err := agents.UserConfigPath()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(ucfg), 0o700)
	t.Cleanup(func() { os.Remove(ucfg) })
	os.WriteFile(ucfg, []byte(`{"claude":{"args":["--append-system-prompt","be brief"]}}`), 0o600)
	inv, err = agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "p", Dir: dir, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}})
	if err != nil || !strings.Contains(strings.Join(inv.Argv, " "), "--model opus --append-system-prompt be brief -- p") ||
		strings.Join(inv.Extra, " ") != "--model opus" || strings.Join(inv.UserExtra, " ") != "--append-system-prompt be brief" || inv.UserConfig != ucfg {
		t.Fatalf("user config: argv %q extra %q user %q from %q: %v", inv.Argv, inv.Extra, inv.UserExtra, inv.UserConfig, err)
	}
	for _, body := range []string{`{"claude":{"args":["--dangerously-skip-permissions"]}}`, `{"claude":{"args":["--permission-mode","acceptEdits"]}}`, `{"claude":{"args":["--output-format","text"]}}`, `{"claud":{}}`} {
		os.WriteFile(ucfg, []byte(body), 0o600)
		if _, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "p", Dir: dir, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}}); err == nil || !strings.Contains(err.Error(), "your config "+ucfg) {
			t.Errorf("user config %s: %v", body, err)
		}
	}
	os.Remove(ucfg)
	os.WriteFile(filepath.Join(dir, agents.ConfigName), []byte(`{"claude":{"args":["--dangerously-skip-permissions"]}}`), 0o644)
	forceTrust(t, dir)
	if _, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "p", Dir: dir, Env: []string{agents.ClaudeBinEnv + "=" + self(t)}}); err == nil || !strings.Contains(err.Error(), "--dangerously-skip-permissions") {
		t.Fatalf("forbidden config arg: %v", err)
	}
}

func TestEnvPolicyProbe(t *testing.T) {
	dir := t.TempDir()
	secret := "sk-ant-SECRET-VALUE-123"
	// Credentials of every shape: the agents' own keys, cloud and forge
	// tokens, a lowercase key, passwords, a proxy URL with a password.
	credentials := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_AUTH_TOKEN",
		"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "GITHUB_TOKEN", "GH_TOKEN", "GEMINI_API_KEY", "anthropic_api_key",
		"NPM_TOKEN", "DB_PASSWORD", "PGPASSWORD", "MY_SERVICE_SECRET", "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS",
		"SSH_AUTH_SOCK", "CLAUDE_CODE_MESSAGING_TOKEN", "HTTPS_PROXY"}
	// What agents need, and look-alikes that are not credentials.
	plain := []string{"ANTHROPIC_BASE_URL", "PATH", "HTTP_PROXY", "NO_PROXY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "TOKENIZERS_PARALLELISM", "KEYTIMEOUT"}
	base := []string{agents.ClaudeBinEnv + "=" + self(t), agents.CodexBinEnv + "=" + self(t), "RELAY_BATON_PROBE=env",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:1", "HTTP_PROXY=http://proxy.example:3128", "NO_PROXY=localhost",
		"CLAUDE_CODE_MAX_OUTPUT_TOKENS=1000", "TOKENIZERS_PARALLELISM=false", "KEYTIMEOUT=1", "CLAUDE_CODE_OAUTH_TOKEN=" + secret}
	for _, k := range credentials {
		v := secret
		if k == "HTTPS_PROXY" {
			v = "http://user:" + secret + "@proxy.example:3128"
		}
		base = append(base, k+"="+v)
	}
	run := func(agent string, allowKeys bool, allowEnv ...string) (map[string]bool, agents.Result, string) {
		t.Helper()
		sess := filepath.Join(t.TempDir(), ".ai-session")
		var c collector
		res := agents.Run(context.Background(), agents.Request{Agent: agent, Role: agents.RoleAsk, Prompt: "env?", Dir: dir,
			SessionDir: sess, Env: base, AllowAPIKeyEnv: allowKeys, AllowEnv: allowEnv, OnActivity: c.add})
		seen := map[string]bool{}
		for _, a := range c.all() {
			if a.Kind == events.ActRaw && strings.HasPrefix(a.Text, "ENV ") {
				seen[strings.TrimPrefix(a.Text, "ENV ")] = true
			}
		}
		for _, k := range plain {
			if !seen[k] {
				t.Fatalf("%s: %s did not reach the agent (saw %v; result %s)", agent, k, seen, res.Summary)
			}
		}
		log, _ := os.ReadFile(filepath.Join(sess, agents.CommandsLogName))
		if strings.Contains(string(log), secret) {
			t.Errorf("%s: commands.log holds a credential's value", agent)
		}
		return seen, res, string(log)
	}
	expect := func(agent string, seen map[string]bool, passed ...string) {
		t.Helper()
		for _, k := range credentials {
			if seen[k] != slices.Contains(passed, k) {
				t.Errorf("%s: %s reached the agent: %v, want %v", agent, k, seen[k], !seen[k])
			}
		}
	}

	// By default no credential reaches either agent; claude keeps its
	// own OAuth login, codex does not get it.
	seen, res, _ := run(agents.Claude, false)
	expect(agents.Claude, seen)
	if !seen["CLAUDE_CODE_OAUTH_TOKEN"] {
		t.Error("claude: its own OAuth login was held back")
	}
	for _, k := range credentials { // and whatever this machine has (names only)
		if !slices.Contains(res.Stripped, k) {
			t.Errorf("Stripped %v lacks %s", res.Stripped, k)
		}
	}
	if len(res.Passed) != 0 || !sort.StringsAreSorted(res.Stripped) {
		t.Errorf("Stripped %v Passed %v", res.Stripped, res.Passed)
	}
	if _, ok := agents.AuditEvent("s1", agents.Claude, res.Passed); ok {
		t.Error("audit event without passed keys")
	}
	seen, _, _ = run(agents.Codex, false)
	expect(agents.Codex, seen)
	if seen["CLAUDE_CODE_OAUTH_TOKEN"] {
		t.Error("codex got claude's OAuth login")
	}

	// --allow-api-key-env: each agent's own keys, to that agent only.
	seen, res, _ = run(agents.Claude, true)
	expect(agents.Claude, seen, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "anthropic_api_key")
	ev, ok := agents.AuditEvent("s1", agents.Claude, res.Passed)
	if !ok || ev.Kind != events.KindAudit || len(res.Passed) != 3 {
		t.Fatalf("audit event %+v ok=%v passed=%v", ev, ok, res.Passed)
	}
	if err := ev.Validate(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ev.Text, "ANTHROPIC_API_KEY") || strings.Contains(ev.Text, secret) {
		t.Errorf("audit text %q", ev.Text)
	}
	seen, _, _ = run(agents.Codex, true)
	expect(agents.Codex, seen, "OPENAI_API_KEY", "CODEX_API_KEY")

	// --allow-env NAME passes one on purpose (either case), audited.
	seen, res, _ = run(agents.Codex, false, "github_token", "HTTPS_PROXY")
	expect(agents.Codex, seen, "GITHUB_TOKEN", "HTTPS_PROXY")
	if strings.Join(res.Passed, ",") != "GITHUB_TOKEN,HTTPS_PROXY" {
		t.Errorf("Passed %v", res.Passed)
	}
}

func TestNonZeroExitProbe(t *testing.T) {
	dir := t.TempDir()
	sess := filepath.Join(dir, ".ai-session")
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "x", Dir: dir, SessionDir: sess,
		Env: []string{agents.ClaudeBinEnv + "=" + self(t), "RELAY_BATON_PROBE=exit3"}})
	if res.ExitCode != 3 || res.Err == nil || res.Session != "probe" {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(res.Summary, "\n") || !strings.Contains(res.Summary, "exited 3") || !strings.Contains(res.Summary, "fatal: probe failure") {
		t.Fatalf("summary %q", res.Summary)
	}
	log, err := os.ReadFile(filepath.Join(sess, agents.CommandsLogName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if !strings.HasPrefix(lines[0], "--- ") || !strings.Contains(lines[0], " START ") || !strings.HasSuffix(lines[0], " ---") ||
		lines[len(lines)-1] != "--- exit 3 ---" || !strings.Contains(string(log), "[stdout] {\"type\":\"system\"") ||
		!strings.Contains(string(log), "[stderr] fatal: probe failure") {
		t.Fatalf("commands.log:\n%s", log)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", strings.Fields(lines[0])[1]); err != nil {
		t.Fatalf("header timestamp: %v", err)
	}
}

func TestCancelKillsTreeProbe(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pgid int
	started := make(chan struct{})
	var c collector
	c.on = func(a events.Activity) {}
	done := make(chan agents.Result)
	go func() {
		done <- agents.Run(ctx, agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "x", Dir: dir,
			Env:        []string{agents.ClaudeBinEnv + "=" + self(t), "RELAY_BATON_PROBE=tree"},
			OnStart:    func(pid int) { pgid = pid; close(started) },
			OnActivity: c.add})
	}()
	<-started
	// Wait until the grandchildren exist.
	deadline := time.Now().Add(goneGuard)
	for len(groupAlive(t, pgid, "59.1234")) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	res := <-done
	if left := waitGone(t, pgid, "59.1234", goneGuard); len(left) > 0 {
		t.Fatalf("still running %v after cancel: %v", goneGuard, left)
	}
	if !res.Cancelled || !errors.Is(res.Err, context.Canceled) || !strings.Contains(res.Summary, "cancelled") {
		t.Fatalf("result %+v", res)
	}
}

func TestTimeoutProbe(t *testing.T) {
	dir := t.TempDir()
	var pgid int
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "x", Dir: dir,
		Timeout: 300 * time.Millisecond, OnStart: func(pid int) { pgid = pid },
		Env: []string{agents.ClaudeBinEnv + "=" + self(t), "RELAY_BATON_PROBE=tree"}})
	if !res.TimedOut || res.Cancelled || !errors.Is(res.Err, context.DeadlineExceeded) || !strings.Contains(res.Summary, "timed out") {
		t.Fatalf("result %+v", res)
	}
	if left := waitGone(t, pgid, "59.1234", goneGuard); len(left) > 0 {
		t.Fatalf("still running after timeout: %v", left)
	}
}

func TestOrphanDoesNotHangProbe(t *testing.T) {
	dir := t.TempDir()
	var pgid int
	t0 := time.Now()
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "x", Dir: dir,
		OnStart: func(pid int) { pgid = pid },
		Env:     []string{agents.ClaudeBinEnv + "=" + self(t), "RELAY_BATON_PROBE=orphan"}})
	if res.Err != nil || res.FinalText != "left one behind" {
		t.Fatalf("result %+v", res)
	}
	// Held by the orphan's open stdout, Run would return when the orphan
	// ends, 59 s after it started; it returns after at most Grace.
	if d := time.Since(t0); d > goneGuard {
		t.Fatalf("Run took %v: the orphan's open stdout held it", d)
	}
	if left := waitGone(t, pgid, "59.4321", goneGuard); len(left) > 0 {
		t.Fatalf("orphan survived: %v", left)
	}
}

func TestCallbackPanicIsReported(t *testing.T) {
	dir := t.TempDir()
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "x", Dir: dir,
		Env:        []string{agents.ClaudeBinEnv + "=" + self(t), "RELAY_BATON_PROBE=env"},
		OnActivity: func(events.Activity) { panic("renderer bug") }})
	if res.Err == nil || !strings.Contains(res.Summary, "renderer bug") || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
}
