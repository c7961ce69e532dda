package hookinstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/hook"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/reports"
)

// doctor's hook checks: this binary's hooks, another binary's, none, an
// absent file (the local one not even listed) and a FIFO in the settings'
// place, reported without blocking.
func TestCheckHooks(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", user)
	bin := filepath.Join(t.TempDir(), "relay-baton")
	merged, err := MergeHooks(nil, HookOptions{Binary: bin, WaitTimeout: hook.DefaultWaitTimeout}, false)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), merged, 0o644); err != nil {
		t.Fatal(err)
	}
	byName := func(cs []reports.Check) map[string]reports.Check {
		m := map[string]reports.Check{}
		for _, c := range cs {
			m[c.Name] = c
		}
		return m
	}
	cs := byName(CheckHooks(root, bin))
	if c := cs["hooks (project)"]; c.Status != "ok" || !strings.Contains(c.Detail, "chat hooks of this binary") {
		t.Errorf("project: %+v", c)
	}
	if c, ok := cs["hooks (local)"]; ok {
		t.Errorf("an absent local settings file is listed: %+v", c)
	}
	if c := cs["hooks (user)"]; c.Status != "ok" || !strings.Contains(c.Detail, "absent: no chat hooks") {
		t.Errorf("user: %+v", c)
	}
	if c := byName(CheckHooks(root, "/elsewhere/relay-baton"))["hooks (project)"]; c.Status != "warn" || !strings.Contains(c.Detail, "another relay-baton binary") {
		t.Errorf("another binary's hooks: %+v", c)
	}
	if cs := CheckHooks("", bin); len(cs) != 1 || cs[0].Name != "hooks (user)" {
		t.Errorf("outside a repository: %+v", cs)
	}
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(`{"hooks":{}}`), 0o644)
	if c := byName(CheckHooks(root, bin))["hooks (project)"]; c.Status != "ok" || !strings.Contains(c.Detail, "no relay-baton hooks") {
		t.Errorf("no hooks: %+v", c)
	}
	testkit.MakeFIFO(t, filepath.Join(user, "settings.json"))
	done := make(chan []reports.Check, 1)
	go func() { done <- CheckHooks(root, bin) }()
	select {
	case cs := <-done:
		if c := byName(cs)["hooks (user)"]; c.Status != "warn" || !strings.Contains(c.Detail, "not a regular file") {
			t.Errorf("a FIFO as the user settings: %+v", c)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("CheckHooks blocked on a FIFO")
	}
}
