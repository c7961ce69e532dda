package agents_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// A repository's config is used only once trusted, with the content
// trusted: the record is the user's (0600, in the config folder, never in
// the repository), a change untrusts it, --revoke forgets it.
func TestTrustConfig(t *testing.T) {
	root := agenttest.GitRepo(t, nil)
	agenttest.WriteRepoConfig(t, root, agenttest.RepoConfig{ClaudeArgs: []string{"--model", "opus"}, Timeout: "45m"})

	c, err := agents.LoadConfig(root)
	if err != nil || c.Path != "" || c.Args(agents.Claude) != nil || c.Timeout != 0 {
		t.Fatalf("untrusted config used: %+v %v", c, err)
	}
	if !strings.Contains(c.Ignored, "not trusted") || !strings.Contains(c.Ignored, "relay-baton trust") || strings.Contains(c.Ignored, "\n") {
		t.Fatalf("untrusted: one line that says how to trust it, got %q", c.Ignored)
	}

	if _, err := agents.TrustConfig(root); err != nil {
		t.Fatal(err)
	}
	c, err = agents.LoadConfig(root)
	if err != nil || c.Ignored != "" || !reflect.DeepEqual(c.Args(agents.Claude), []string{"--model", "opus"}) {
		t.Fatalf("trusted config not used: %+v %v", c, err)
	}
	tp, _ := agents.TrustPath()
	if fi, err := os.Lstat(tp); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust record %s: %v %v", tp, fi, err)
	}
	if strings.HasPrefix(tp, root) {
		t.Fatalf("trust record %s inside the repository", tp)
	}
	entries, err := agents.TrustedConfigs()
	if err != nil || len(entries) == 0 {
		t.Fatalf("list: %v %v", entries, err)
	}
	found := false
	for _, e := range entries {
		found = found || e.Path == c.Path
	}
	if !found {
		t.Fatalf("%s not listed in %+v", c.Path, entries)
	}

	// One byte changed: untrusted again.
	agenttest.WriteRepoConfig(t, root, agenttest.RepoConfig{ClaudeArgs: []string{"--model", "opux"}, Timeout: "45m"})
	c, err = agents.LoadConfig(root)
	if err != nil || c.Args(agents.Claude) != nil || !strings.Contains(c.Ignored, "changed since you trusted it") {
		t.Fatalf("changed config: %+v %v", c, err)
	}
	st, _, err := agents.CheckTrust(root)
	if err != nil || st.Trusted || !st.Changed {
		t.Fatalf("CheckTrust after a change: %+v %v", st, err)
	}

	// Revoked: ignored again, and the record forgets it.
	if _, err := agents.TrustConfig(root); err != nil {
		t.Fatal(err)
	}
	if ok, err := agents.RevokeConfig(root); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if c, _ := agents.LoadConfig(root); c.Path != "" || !strings.Contains(c.Ignored, "not trusted") {
		t.Fatalf("revoked config used: %+v", c)
	}
	if ok, err := agents.RevokeConfig(root); ok || err != nil {
		t.Fatalf("second revoke: %v %v", ok, err)
	}

	// A config relay-baton would refuse is not recorded.
	agenttest.WriteRepoConfig(t, root, agenttest.RepoConfig{ClaudeArgs: []string{"--mcp-config", `{"mcpServers":{"x":{"command":"sh"}}}`}})
	if _, err := agents.TrustConfig(root); err == nil || !strings.Contains(err.Error(), "--mcp-config") {
		t.Fatalf("trust of a refused config: %v", err)
	}
	if st, _, _ := agents.CheckTrust(root); st.Trusted || st.Entry != nil {
		t.Fatalf("refused config recorded: %+v", st)
	}
}

// The trust record is never written or read through a link: a link at its
// name is replaced by a file, not followed; a link read is refused.
func TestTrustRecordNoLink(t *testing.T) {
	root := agenttest.GitRepo(t, nil)
	agenttest.WriteRepoConfig(t, root, agenttest.RepoConfig{Timeout: "5m"})
	tp, _ := agents.TrustPath()
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(tp)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(target, []byte(`{"version":1,"trusted":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, tp); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.TrustedConfigs(); err == nil {
		t.Fatal("a linked trust record was read")
	}
	if c, err := agents.LoadConfig(root); err != nil || c.Path != "" || !strings.Contains(c.Ignored, "trust record") {
		t.Fatalf("config with a linked trust record: %+v %v", c, err)
	}
	os.Remove(tp)
	if err := os.Symlink(target, tp); err != nil {
		t.Fatal(err)
	}
	// updateTrust reads the record first: a link there is refused, the
	// target untouched.
	if _, err := agents.TrustConfig(root); err == nil {
		t.Fatal("trust wrote through a linked record")
	}
	if b, _ := os.ReadFile(target); string(b) != `{"version":1,"trusted":[]}` {
		t.Fatalf("the link's target was written: %s", b)
	}
	os.Remove(tp)
}

func TestRefusedArgs(t *testing.T) {
	refused := []struct {
		agent string
		argv  []string
	}{
		{agents.Codex, []string{"-c", `mcp_servers.x.command="sh"`}},
		{agents.Codex, []string{`-cmcp_servers.x.command="sh"`}},
		{agents.Codex, []string{"--config", `mcp_servers.x.command="sh"`}},
		{agents.Codex, []string{`--config=mcp_servers.x.command="sh"`}},
		{agents.Codex, []string{"-c", `mcp_servers={x={command="sh"}}`}},
		{agents.Codex, []string{"-c", `"mcp_servers" . x.command="sh"`}},
		{agents.Codex, []string{"-c", ` MCP_SERVERS.x.command="sh"`}},
		{agents.Codex, []string{"-c", `notify=["sh","-c","id"]`}},
		{agents.Codex, []string{"-c", `hooks.Stop=[]`}},
		{agents.Codex, []string{"-c", `profiles.x.sandbox_mode="danger-full-access"`}},
		{agents.Codex, []string{"-c", `approval_policy="never"`}},
		{agents.Codex, []string{"-c", `sandbox_workspace_write.writable_roots=["/"]`}},
		{agents.Codex, []string{"-c", `shell_environment_policy.inherit="all"`}},
		{agents.Codex, []string{"-c", `model_providers.x.auth={command="sh"}`}},
		{agents.Codex, []string{"-c", `projects."/".trust_level="trusted"`}},
		{agents.Codex, []string{"--profile", "x"}},
		{agents.Codex, []string{"-px"}},
		{agents.Codex, []string{"-p", "x"}},
		{agents.Codex, []string{"-s", "danger-full-access"}},
		{agents.Codex, []string{"--sandbox=workspace-write"}},
		{agents.Codex, []string{"--add-dir", "/"}},
		{agents.Codex, []string{"--add-dir=/"}},
		{agents.Codex, []string{"--dangerously-bypass-hook-trust"}},
		{agents.Codex, []string{"--DANGEROUSLY-BYPASS-APPROVALS-AND-SANDBOX"}},
		{agents.Codex, []string{"-C", "/"}},
		{agents.Codex, []string{"-o/tmp/x"}},
		{agents.Codex, []string{"--trust"}},
		{agents.Codex, []string{"--"}},
		{agents.Claude, []string{"--mcp-config", "{}"}},
		{agents.Claude, []string{"--mcp-config={}"}},
		{agents.Claude, []string{"--settings", `{"hooks":{}}`}},
		{agents.Claude, []string{"--allowedTools", "Bash(*)"}},
		{agents.Claude, []string{"--allowed-tools=Bash(*)"}},
		{agents.Claude, []string{"--add-dir", "/"}},
		{agents.Claude, []string{"--permission-mode", "acceptEdits"}},
		{agents.Claude, []string{"--dangerously-skip-permissions"}},
		{agents.Claude, []string{"--plugin-dir", "x"}},
		{agents.Claude, []string{"--agents", "{}"}},
		{agents.Claude, []string{"--bg"}},
		{agents.Claude, []string{"-c"}},
		{agents.Claude, []string{"-vc"}},
		{agents.Claude, []string{"-w"}},
		{agents.Claude, []string{"--debug-file", "/tmp/x"}},
	}
	for _, c := range refused {
		if got := agents.RefusedArgs(c.agent, c.argv); len(got) != 1 {
			t.Errorf("%s %q: refused %v, want one refusal", c.agent, c.argv, got)
		}
	}
	allowed := []struct {
		agent string
		argv  []string
	}{
		{agents.Codex, []string{"-m", "o3"}},
		{agents.Codex, []string{"-mo3"}},
		{agents.Codex, []string{"-c", `model="o3"`}},
		{agents.Codex, []string{"-c", `model_reasoning_effort="high"`}},
		{agents.Codex, []string{"-c", `model_provider="mine"`}},
		{agents.Codex, []string{"--skip-git-repo-check"}},
		{agents.Claude, []string{"--model", "opus"}},
		{agents.Claude, []string{"--append-system-prompt", "--mcp-config is mentioned here as text"}},
		{agents.Claude, []string{"-n", "cwdname"}},
		{agents.Claude, []string{"--disallowedTools", "WebFetch"}},
		{agents.Claude, []string{"--effort", "high"}},
	}
	for _, c := range allowed {
		if got := agents.RefusedArgs(c.agent, c.argv); len(got) != 0 {
			t.Errorf("%s %q: refused %v, want none", c.agent, c.argv, got)
		}
	}
	// Control and bidi characters of a repository's file are quoted in
	// the message, never printed raw.
	if s := agents.JoinRefused(agents.RefusedArgs(agents.Claude, []string{"--add-dir=\x1b]0;x\x07\u202e"})); strings.ContainsAny(s, "\x1b\x07\u202e") || !strings.Contains(s, `\x1b`) {
		t.Errorf("refusal message %q", s)
	}
	// A -c value is consumed with its flag: the key is reported, and the
	// word after it is checked on its own.
	got := agents.RefusedArgs(agents.Codex, []string{"-c", "notify=[]", "--add-dir", "/x"})
	if len(got) != 2 || got[0].Arg != "-c notify=[]" || !strings.Contains(got[0].Why, "notify") || got[1].Arg != "--add-dir" {
		t.Fatalf("got %+v", got)
	}
}
