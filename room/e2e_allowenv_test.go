//go:build unix

package room

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// A codex provider that reads its key from a variable (env_key), with the
// real codex against the mock: /diagnose names the variable, that it is
// set and held back; /execute fails with codex's words once and one line
// naming --allow-env, /allow-env and allowEnv; /allow-env passes it (the
// next preview lists it, the log has it) and /execute then runs.
func TestE2ECodexProviderKeyAllowEnv(t *testing.T) {
	o := agenttest.NewOpenAI(t, agenttest.Reply(agenttest.Text("EXECUTED-33")))
	dir := newRepo(t)
	env := append(agenttest.OfflineEnv(t, nil, o), "NO_COLOR=1", "X_API_KEY=sk-test-33")
	home, _ := agenttest.EnvValue(env, "CODEX_HOME")
	cfg := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(cfg)
	if err == nil {
		err = os.WriteFile(cfg, []byte(strings.Replace(string(b), "[model_providers.mock]\n", "[model_providers.mock]\nenv_key = \"X_API_KEY\"\n", 1)), 0o600)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte("## Goal\nsay hi\n## Steps\n1. nothing\n"), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := startBinaryArgs(t, dir, []string{"chat", "--agent", "codex"}, env...)
	p.until(t, "codex› ")
	p.send(t, "/diagnose\r")
	p.untilWithin(t, "fail codex key             codex provider mock reads its key from X_API_KEY:", agentWait)
	p.until(t, "set, but relay-baton holds it back from agents")
	p.until(t, "--allow-env X_API_KEY")
	p.until(t, "codex provider")
	p.until(t, "mock reads X_API_KEY (set, held back")
	p.until(t, "codex› ")
	if s := p.String(); strings.Contains(s, "codex login") || strings.Contains(s, "none set (agents use their CLI login)") {
		t.Fatalf("/diagnose still points at the login:\n%s", s)
	}

	p.send(t, "/execute\r")
	p.until(t, "key:     codex provider mock reads its key from X_API_KEY: set, but relay-baton holds it back")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	start := len(p.String())
	p.untilWithin(t, "codex needs X_API_KEY, which relay-baton holds back from agents (a credential): pass it with --allow-env X_API_KEY (in the room: /allow-env", agentWait)
	p.until(t, `"allowEnv": ["X_API_KEY"] in the repository's .relay-baton.json, then relay-baton trust (exit 1`)
	p.until(t, "codex› ")
	failed := p.String()[start:]
	if n := strings.Count(failed, "Missing environment variable"); n != 1 {
		t.Fatalf("codex's refusal printed %d times:\n%s", n, failed)
	}
	if n := strings.Count(failed, "--allow-env X_API_KEY"); n != 1 {
		t.Fatalf("the fix printed %d times:\n%s", n, failed)
	}

	p.send(t, "/allow-env 9BAD\r")
	p.until(t, "/allow-env takes variable names")
	p.until(t, "codex› ")
	p.send(t, "/allow-env X_API_KEY\r")
	p.until(t, "X_API_KEY now passed to claude and codex in this room")
	p.until(t, "codex› ")
	p.send(t, "/execute\r")
	p.until(t, "env PASSED (on purpose, audited): X_API_KEY")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.untilWithin(t, "EXECUTED-33", agentWait)
	p.until(t, "codex: exit 0")
	p.until(t, "codex› ")
	p.send(t, "\x04")
	p.wait(t)

	var allowed, audited bool
	for _, ev := range readLog(t, dir) {
		if ev.Kind == events.KindAudit {
			m, _ := events.MetaOf[events.AuditMeta](&ev)
			allowed = allowed || strings.Contains(ev.Text, "/allow-env") && len(m.Vars) == 1 && m.Vars[0] == "X_API_KEY"
			audited = audited || m.Agent == "codex" && len(m.Vars) == 1 && m.Vars[0] == "X_API_KEY"
		}
	}
	if !allowed || !audited {
		t.Fatalf("the log lacks the /allow-env (%v) or the run's audit (%v) event", allowed, audited)
	}
}
