package agents_test

import (
	"slices"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// Every run relay-baton starts carries the agent-run marker, so its Claude
// Code hooks return at once; a caller's Env cannot switch it off.
func TestPrepareMarksAgentRun(t *testing.T) {
	dir := t.TempDir()
	bin := self(t)
	for _, agent := range []string{agents.Claude, agents.Codex} {
		inv, err := agents.Prepare(agents.Request{Agent: agent, Role: agents.RoleAsk, Prompt: "p", Dir: dir,
			Env: []string{agents.ClaudeBinEnv + "=" + bin, agents.CodexBinEnv + "=" + bin, agents.AgentRunEnv + "=0"}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range inv.Env {
			if len(kv) > len(agents.AgentRunEnv) && kv[:len(agents.AgentRunEnv)+1] == agents.AgentRunEnv+"=" {
				got = append(got, kv)
			}
		}
		if !slices.Equal(got, []string{agents.AgentRunEnv + "=1"}) {
			t.Errorf("%s: marker entries %q, want exactly %s=1", agent, got, agents.AgentRunEnv)
		}
	}
}
