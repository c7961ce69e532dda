package room

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

func startOffline(t *testing.T, dir string, a *agenttest.Anthropic, o *agenttest.OpenAI) *proc {
	t.Helper()
	return startBinary(t, dir, append(agenttest.OfflineEnv(t, a, o), "NO_COLOR=1")...)
}

func kindsOf(list []events.Event) []string {
	var k []string
	for _, e := range list {
		k = append(k, string(e.Kind))
	}
	return k
}

func TestE2EPlanYesRunsClaude(t *testing.T) {
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Thinking("look"), agenttest.Bash("ls")),
		agenttest.Reply(agenttest.Text("## Goal\nAdd --verbose.\n\n## Steps\n1. Edit main.go\n")),
	)
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "/plan add a --verbose flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "⚙ Bash")
	p.until(t, "wrote .ai-session/plan.md")
	p.until(t, "claude› ")
	p.send(t, "/replay\r")
	p.until(t, "plan: plan.md written")
	p.until(t, "events; roles {")
	p.send(t, "\x04")
	p.wait(t)
	b, err := os.ReadFile(filepath.Join(dir, ".ai-session", "plan.md"))
	if err != nil || !strings.Contains(string(b), "Add --verbose.") {
		t.Fatalf("plan.md %q %v", b, err)
	}
	if got := strings.Join(kindsOf(readLog(t, dir)), ","); !strings.HasPrefix(got, "command,prompt_preview,command,agent_run,plan") {
		t.Fatalf("events %s", got)
	}
	if len(a.Requests()) < 2 {
		t.Fatalf("claude made %d requests", len(a.Requests()))
	}
}
