package hookinstall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/workspace"
)

const foreignSettings = `{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "someFutureKey": {"nested": [1, 2]},
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "~/bin/notify.sh", "timeout": 5}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
  }
}`

func hookCommands(t *testing.T, settings []byte) map[string][]string {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command     string `json:"command"`
				AsyncRewake bool   `json:"asyncRewake"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				c := h.Command
				if h.AsyncRewake {
					c += " [async]"
				}
				out[ev] = append(out[ev], c)
			}
		}
	}
	return out
}

func TestMergeHooksKeepsForeignAndIsIdempotent(t *testing.T) {
	bin := "/opt/relay baton/relay-baton"
	once, err := MergeHooks([]byte(foreignSettings), HookOptions{Binary: bin}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := hookCommands(t, once)
	q := `'/opt/relay baton/relay-baton'`
	want := map[string][]string{
		"Stop":             {"~/bin/notify.sh", q + " hook stop", q + " hook wait [async]"},
		"SessionStart":     {q + " hook session-start", q + " hook wait [async]"},
		"UserPromptSubmit": {q + " hook prompt-submit"},
		"Notification":     {q + " hook notify"},
		"PreToolUse":       {"guard"},
	}
	for ev, w := range want {
		if strings.Join(got[ev], "|") != strings.Join(w, "|") {
			t.Errorf("%s = %q, want %q", ev, got[ev], w)
		}
	}
	var root map[string]any
	json.Unmarshal(once, &root)
	if root["someFutureKey"] == nil || root["permissions"] == nil {
		t.Errorf("unknown keys dropped: %s", once)
	}
	twice, _ := MergeHooks(once, HookOptions{Binary: bin}, false)
	if string(twice) != string(once) {
		t.Errorf("second install changed the file:\n%s\nvs\n%s", once, twice)
	}
	// A new binary path replaces ours instead of adding a second set.
	moved, _ := MergeHooks(once, HookOptions{Binary: "/usr/local/bin/relay-baton"}, false)
	if g := hookCommands(t, moved); len(g["Stop"]) != 3 || g["Stop"][1] != "/usr/local/bin/relay-baton hook stop" {
		t.Errorf("after moving the binary: %q", g["Stop"])
	}
	un, _ := MergeHooks(once, HookOptions{Binary: bin}, true)
	g := hookCommands(t, un)
	if len(g) != 2 || strings.Join(g["Stop"], "|") != "~/bin/notify.sh" || g["PreToolUse"][0] != "guard" {
		t.Errorf("after uninstall: %q", g)
	}
}

func TestMergeHooksBadInput(t *testing.T) {
	if _, err := MergeHooks([]byte("{not json"), HookOptions{Binary: "/b/relay-baton"}, false); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken settings: %v", err)
	}
	if _, err := MergeHooks([]byte(`{"hooks":[1]}`), HookOptions{Binary: "/b/relay-baton"}, false); err == nil {
		t.Error("hooks that is not an object was accepted")
	}
	out, err := MergeHooks(nil, HookOptions{Binary: "/b/relay-baton"}, false)
	if err != nil || len(hookCommands(t, out)["Stop"]) != 2 {
		t.Errorf("empty settings: %s %v", out, err)
	}
}

func TestPlanApplyHooks(t *testing.T) {
	ws := t.TempDir()
	p, _ := workspace.SettingsPath("project", ws)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(foreignSettings), 0o640)
	plan, err := PlanHooks(p, HookOptions{Binary: "/b/relay-baton"}, false)
	if err != nil || !plan.Changed {
		t.Fatal(plan.Changed, err)
	}
	if err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
	}
	again, _ := PlanHooks(p, HookOptions{Binary: "/b/relay-baton"}, false)
	if again.Changed {
		t.Error("second plan reports a change")
	}
	if lp, _ := workspace.SettingsPath("local", ws); filepath.Base(lp) != "settings.local.json" {
		t.Error(lp)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "/cfg")
	if up, _ := workspace.SettingsPath("user", ws); up != "/cfg/settings.json" {
		t.Error(up)
	}
	if _, err := workspace.SettingsPath("global", ws); err == nil {
		t.Error("bad scope accepted")
	}
}

func TestHooksWaitTimeout(t *testing.T) {
	hs := Hooks(HookOptions{Binary: "/b/relay-baton", WaitTimeout: time.Hour})
	if hs[1].Command != "/b/relay-baton hook wait --timeout 59m0s" || hs[1].Timeout != 3600 || !hs[1].AsyncRewake {
		t.Errorf("wait entry = %+v", hs[1])
	}
	if !isOurs(hs[1].Command) || isOurs("/b/other hook wait") || isOurs("relay-baton-ish hook frob") {
		t.Error("isOurs misjudged a command")
	}
	def := Hooks(HookOptions{Binary: "/b/relay-baton"})
	if def[1].Command != "/b/relay-baton hook wait" || def[1].Timeout != 86400 {
		t.Errorf("default wait entry = %+v", def[1])
	}
	// Changing the timeout replaces the entry instead of adding one.
	a, _ := MergeHooks(nil, HookOptions{Binary: "/b/relay-baton"}, false)
	b, _ := MergeHooks(a, HookOptions{Binary: "/b/relay-baton", WaitTimeout: time.Hour}, false)
	if g := hookCommands(t, b); len(g["Stop"]) != 2 || g["Stop"][1] != "/b/relay-baton hook wait --timeout 59m0s [async]" {
		t.Errorf("Stop after changing the timeout: %q", g["Stop"])
	}
}
