package agents_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/safeio"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	c, err := agents.ReadConfig(dir)
	if err != nil || c.Path != "" || c.Timeout != 0 || c.Args(agents.Claude) != nil {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, agents.ConfigName), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"claude":{"args":["--model","opus"]},"codex":{"args":["-c","model=\"o3\""]},"timeout":"45m"}`)
	c, err = agents.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Args(agents.Claude), []string{"--model", "opus"}) || !reflect.DeepEqual(c.Args(agents.Codex), []string{"-c", `model="o3"`}) ||
		c.Timeout != 45*time.Minute || c.Path != filepath.Join(dir, agents.ConfigName) {
		t.Fatalf("config %+v", c)
	}
	bad := []struct{ body, want string }{
		{`{"claude":{"args":["--full-auto"]}}`, "--full-auto"},
		{`{"codex":{"args":["--dangerously-bypass-approvals-and-sandbox"]}}`, "--dangerously-bypass-approvals-and-sandbox"},
		{`{"claude":{"args":["--permission-mode=bypassPermissions"]}}`, "bypassPermissions"},
		{`{"claude":{"args":["--dangerously-skip-permissions"]}}`, "--dangerously-skip-permissions"},
		{`{"codex":{"args":["-c","sandbox_mode=\"danger-full-access\""]}}`, "danger-full-access"},
		{`{"claude":{"args":["--permission-mode","acceptEdits"]}}`, "--permission-mode (not allowed: relay-baton sets it per run"},
		{`{"codex":{"args":["--sandbox","workspace-write"]}}`, "--sandbox (not allowed"},
		{`{"timeout":"soon"}`, `timeout "soon"`},
		{`{"timeout":"-5m"}`, "positive duration"},
		{`{"claud":{}}`, "unknown field"},
		{`{"claude":{"args":"--model x"}}`, "cannot unmarshal"},
		{`{"claude":`, "unexpected EOF"},
		{`{} {}`, "trailing data"},
		{`{"allowEnv":["A B"]}`, "not a variable name"},
		{`{"codex":{"args":["-c","mcp_servers.x.command=\"sh\""]}}`, "mcp_servers.x.command=\"sh\" (not allowed: mcp_servers.x.command: starts a process"},
	}
	for _, b := range bad {
		write(b.body)
		_, err := agents.ReadConfig(dir)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), agents.ConfigName) {
			t.Errorf("%s: err %v, want it to mention %q and the file", b.body, err, b.want)
		}
	}
	write(strings.Repeat(" ", 2<<20))
	if _, err := agents.ReadConfig(dir); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("huge file: %v", err)
	}
}

// A trusted .relay-baton.json may pass only the allow-list: the model,
// its effort or reasoning level, a fallback model, each a plain word. Every
// hostile argument a review tried (hidden flags, aliases of refused ones,
// paths, URLs, remotes, sockets, codex config keys) is refused by name,
// with the list of what is allowed; it names no path, URL or setting.
func TestRepoConfigAllowList(t *testing.T) {
	hostile := []struct {
		agent string
		argv  []string
	}{
		{agents.Claude, []string{"--plugin-dir-no-mcp", "plugins"}},
		{agents.Claude, []string{"--managed-settings", `{"hooks":{}}`}},
		{agents.Claude, []string{"--sdk-url", "ws://127.0.0.1:9/x"}},
		{agents.Claude, []string{"--rc"}},
		{agents.Claude, []string{"--remote", "x"}},
		{agents.Claude, []string{"--pool", "x"}},
		{agents.Claude, []string{"--project-config-root", "/tmp"}},
		{agents.Claude, []string{"--channels", "plugin:x"}},
		{agents.Claude, []string{"--messaging-socket-path", "/tmp/s.sock"}},
		{agents.Claude, []string{"--append-system-prompt", "obey the file"}},
		{agents.Claude, []string{"--system-prompt-file", "/etc/passwd"}},
		{agents.Claude, []string{"--mcp-config", "{}"}},
		{agents.Claude, []string{"--settings", "{}"}},
		{agents.Claude, []string{"--plugin-dir", "x"}},
		{agents.Claude, []string{"--model", "../../etc/passwd"}},
		{agents.Claude, []string{"--model", "http://evil.example/m"}},
		{agents.Claude, []string{"--model=--settings"}},
		{agents.Claude, []string{"--model", "--settings", "{}"}},
		{agents.Claude, []string{"--model"}},
		{agents.Claude, []string{"--effort", "high; id"}},
		{agents.Claude, []string{"--MODEL", "opus"}},
		{agents.Claude, []string{"-m", "opus"}},
		{agents.Claude, []string{"--"}},
		{agents.Codex, []string{"--remote", "ws://evil.example:1"}},
		{agents.Codex, []string{"--remote-auth-token-env", "GITHUB_TOKEN"}},
		{agents.Codex, []string{"--image", "/etc/passwd"}},
		{agents.Codex, []string{"-i", "/etc/passwd"}},
		{agents.Codex, []string{"-i/etc/passwd"}},
		{agents.Codex, []string{"-c", `model_instructions_file="/etc/passwd"`}},
		{agents.Codex, []string{"-c", `experimental_instructions_file="x"`}},
		{agents.Codex, []string{"-c", `model_provider="mine"`}},
		{agents.Codex, []string{"-c", `model_providers.x.base_url="http://evil"`}},
		{agents.Codex, []string{"-c", `model="o3"`, "-c", "x=1"}},
		{agents.Codex, []string{"-c", `model=["o3"]`}},
		{agents.Codex, []string{"-c", `model="o3\" x"`}},
		{agents.Codex, []string{"-c", `model.x="o3"`}},
		{agents.Codex, []string{"-c", `model_reasoning_effort="high", x=1`}},
		{agents.Codex, []string{"--config=notify=[]"}},
		{agents.Codex, []string{"-m", "/tmp/model"}},
		{agents.Codex, []string{"-m", "o3", "-m", "o4"}},
		{agents.Codex, []string{"--oss"}},
		{agents.Codex, []string{"--skip-git-repo-check"}},
		{agents.Codex, []string{"--output-schema", "/etc/passwd"}},
		{agents.Codex, []string{"-C", "/"}},
		{agents.Codex, []string{"resume", "--last"}},
	}
	dir := t.TempDir()
	for _, h := range hostile {
		if got := agents.NotAllowedArgs(h.agent, h.argv); len(got) == 0 {
			t.Errorf("%s %q: allowed, want refused", h.agent, h.argv)
		}
		body, _ := json.Marshal(map[string]any{h.agent: map[string]any{"args": h.argv}})
		if err := os.WriteFile(filepath.Join(dir, agents.ConfigName), body, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := agents.ReadConfig(dir)
		if err == nil {
			t.Errorf("%s: read as a config", body)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, h.agent+".args: ") || !strings.Contains(msg, "may set only claude.args: --model MODEL, --effort LEVEL, --fallback-model MODELS; "+
			"codex.args: --model (-m) MODEL, -c model=MODEL, -c model_reasoning_effort=LEVEL; \"timeout\"; \"allowEnv\"") ||
			!strings.Contains(msg, agents.UserConfigName) {
			t.Errorf("%s: message %q does not name the argument, what is allowed and the user's config", body, msg)
		}
	}
	allowed := []struct {
		agent string
		argv  []string
	}{
		{agents.Claude, []string{"--model", "opus", "--effort", "high", "--fallback-model", "sonnet,haiku"}},
		{agents.Claude, []string{"--model=claude-opus-4-5[1m]", "--effort=max"}},
		{agents.Codex, []string{"-m", "gpt-5.1-codex", "-c", `model_reasoning_effort="high"`}},
		{agents.Codex, []string{"--model=o3", "--config=model_reasoning_effort=low"}},
		{agents.Codex, []string{"-mo3", "--config", "model_reasoning_effort='minimal'"}},
		{agents.Codex, []string{"-c", `model="o3"`}},
	}
	for _, a := range allowed {
		if got := agents.NotAllowedArgs(a.agent, a.argv); len(got) != 0 {
			t.Errorf("%s %q: refused %v, want allowed", a.agent, a.argv, got)
		}
	}
}

func TestForbiddenArgs(t *testing.T) {
	got := agents.ForbiddenArgs([]string{"--model", "x", "--full-auto", "--permission-mode", "bypassPermissions", "--dangerously-skip-permissions=true", "--yolo", "--full-autonomy"})
	want := []string{"--full-auto", "bypassPermissions", "--dangerously-skip-permissions=true", "--yolo"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
	if agents.ForbiddenArgs([]string{"-p", "--verbose", "--sandbox", "workspace-write"}) != nil {
		t.Fatal("clean args flagged")
	}
}

// loadWithin is LoadConfig that fails the test instead of hanging.
func loadWithin(t *testing.T, dir string) (agents.Config, error) {
	t.Helper()
	type res struct {
		c   agents.Config
		err error
	}
	done := make(chan res, 1)
	go func() { c, err := agents.LoadConfig(dir); done <- res{c, err} }()
	select {
	case r := <-done:
		return r.c, r.err
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("LoadConfig(%s) blocked", dir)
	}
	return agents.Config{}, nil
}

// A repository can plant a FIFO (or a link to one) as .relay-baton.json:
// every command reads it, and none may hang on it. A link to a regular
// file is a repository's choice and is followed.
func TestLoadConfigFIFOAndLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, agents.ConfigName)
	testkit.MakeFIFO(t, p)
	_, err := loadWithin(t, dir)
	if err == nil || !strings.Contains(err.Error(), "a named pipe (FIFO), not a regular file: move it aside") || !strings.Contains(err.Error(), agents.ConfigName) {
		t.Fatalf("FIFO: err = %v", err)
	}
	if !errors.Is(err, safeio.ErrNotRegular) {
		t.Fatalf("FIFO: %v does not wrap ErrNotRegular", err)
	}
	// Every agent run reads it first: Prepare says why and does not hang.
	prepared := make(chan error, 1)
	go func() {
		_, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "p", Dir: dir})
		prepared <- err
	}()
	select {
	case err := <-prepared:
		if !errors.Is(err, safeio.ErrNotRegular) {
			t.Fatalf("Prepare with a FIFO config: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Prepare blocked on a FIFO .relay-baton.json")
	}

	// A link to a FIFO elsewhere: the same.
	other := t.TempDir()
	fifo := filepath.Join(other, "fifo")
	testkit.MakeFIFO(t, fifo)
	os.Remove(p)
	if err := os.Symlink(fifo, p); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWithin(t, dir); !errors.Is(err, safeio.ErrNotRegular) {
		t.Fatalf("link to a FIFO: err = %v", err)
	}

	// A folder there is no config either.
	os.Remove(p)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWithin(t, dir); !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Fatalf("folder: err = %v", err)
	}

	// A link to a regular config is followed.
	os.Remove(p)
	real := filepath.Join(other, "shared.json")
	os.WriteFile(real, []byte(`{"timeout":"7m"}`), 0o600)
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.TrustConfig(dir); err != nil {
		t.Fatal(err)
	}
	if c, err := loadWithin(t, dir); err != nil || c.Timeout != 7*time.Minute {
		t.Fatalf("link to a config: %+v %v", c, err)
	}
	// A dangling link is a missing file.
	os.Remove(real)
	if c, err := loadWithin(t, dir); err != nil || c.Path != "" {
		t.Fatalf("dangling link: %+v %v", c, err)
	}
}
