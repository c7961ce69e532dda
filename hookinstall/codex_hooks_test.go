//go:build unix

package hookinstall

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
)

func TestMergeCodexHooks(t *testing.T) {
	o := HookOptions{Binary: "/opt/rb/relay-baton", Agent: conversation.AgentCodex}
	foreign := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/bin/notify","timeout":5}]}]},"other":1}`
	b, err := MergeHooks([]byte(foreign), o, false)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
		Other int `json:"other"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Other != 1 || len(got.Hooks["Stop"]) != 2 || got.Hooks["Stop"][0].Hooks[0]["command"] != "/usr/bin/notify" {
		t.Fatalf("merged:\n%s", b)
	}
	for ev, sub := range map[string]string{"Stop": "stop", "SessionStart": "session-start", "UserPromptSubmit": "prompt-submit"} {
		g := got.Hooks[ev]
		h := g[len(g)-1].Hooks[0]
		if h["command"] != "/opt/rb/relay-baton hook "+sub || h["asyncRewake"] != nil {
			t.Errorf("%s: %v", ev, h)
		}
	}
	if strings.Contains(string(b), "hook wait") {
		t.Errorf("Codex has no asyncRewake: no waiter entry:\n%s", b)
	}
	again, _ := MergeHooks(b, o, false)
	if !jsonEqual(again, b) {
		t.Errorf("not idempotent:\n%s\n%s", b, again)
	}
	out, _ := MergeHooks(b, o, true)
	if !jsonEqual(out, []byte(foreign)) {
		t.Errorf("uninstall left:\n%s", out)
	}
	if p, err := CodexHooksPath("user", "/ws"); err != nil || !strings.HasSuffix(p, "/hooks.json") {
		t.Errorf("user scope: %q %v", p, err)
	}
	if p, _ := CodexHooksPath("project", "/ws"); p != "/ws/.codex/hooks.json" {
		t.Errorf("project scope: %q", p)
	}
	if _, err := CodexHooksPath("local", "/ws"); err == nil {
		t.Error("local scope accepted for Codex")
	}
}
