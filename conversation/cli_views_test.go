package conversation

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// doctor's hook checks: this binary's hooks, another binary's, none, an
// absent file (the local one not even listed) and a FIFO in the settings'
// place, reported without blocking.
func TestCheckHooks(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", user)
	bin := filepath.Join(t.TempDir(), "relay-baton")
	merged, err := MergeHooks(nil, HookOptions{Binary: bin, WaitTimeout: DefaultWaitTimeout}, false)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), merged, 0o644); err != nil {
		t.Fatal(err)
	}
	byName := func(cs []HookCheck) map[string]HookCheck {
		m := map[string]HookCheck{}
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
	makeFIFO(t, filepath.Join(user, "settings.json"))
	done := make(chan []HookCheck, 1)
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

// replay's --session completion: the log's sessions, newest first; none
// outside a repository or for a FIFO in the log's place.
func TestLogSessions(t *testing.T) {
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if got := LogSessions(root); len(got) != 0 {
		t.Errorf("no log: %q", got)
	}
	if _, err := EnsureSessionDir(root); err != nil {
		t.Fatal(err)
	}
	l, err := events.OpenLog(LogPath(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "a", "c", ""} {
		if err := l.Append(events.New(s, events.RoleUser, events.KindMessage, "hi")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	sub := filepath.Join(root, "sub")
	os.Mkdir(sub, 0o755)
	if got := LogSessions(sub); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("sessions %q, want c a b", got)
	}
	if got := LogSessions(t.TempDir()); got != nil {
		t.Errorf("outside a repository: %q", got)
	}
	os.Remove(LogPath(root))
	makeFIFO(t, LogPath(root))
	if got := LogSessions(root); got != nil {
		t.Errorf("a FIFO log: %q", got)
	}
}

// targets' text with no session, PickSession's two ways and MarkLead's
// note for a session that is not running.
func TestTargetsReportPickAndMark(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // no user hooks
	var b strings.Builder
	if err := WriteTargetsReport(&b, ws, nil, false, time.Now()); err != nil || !strings.HasPrefix(b.String(), "No running Claude Code session found for "+ws+".\nRun 'relay-baton hook install'") {
		t.Errorf("empty report %q %v", b.String(), err)
	}
	// Right after 'hook install' the missing piece is a session started
	// with the hooks, not the install.
	if _, err := InstallHooks(context.Background(), io.Discard, InstallOptions{Agent: "claude", Workspace: ws, Binary: "/usr/local/bin/relay-baton", WaitTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteTargetsReport(&b, ws, nil, false, time.Now()); err != nil || strings.Contains(b.String(), "Run 'relay-baton hook install'") ||
		!strings.Contains(b.String(), "The chat hooks are installed ("+filepath.Join(ws, ".claude", "settings.json")+"): start Claude Code there, or restart (resume) a session started before the install") {
		t.Errorf("report after hook install %q %v", b.String(), err)
	}
	if _, err := PickSession(ws, "../x"); err == nil || !strings.Contains(err.Error(), "UUID") {
		t.Errorf("a bad id: %v", err)
	}
	const id = "01234567-89ab-cdef-0123-456789abcdef"
	if got, err := PickSession(ws, id); got != id || err != nil {
		t.Errorf("PickSession(id) = %q, %v", got, err)
	}
	if _, err := PickSession(ws, ""); err == nil || !strings.Contains(err.Error(), ErrNoLiveSession.Error()) {
		t.Errorf("no lead: %v", err)
	}
	if running, err := MarkLead(ws, id); running || err != nil {
		t.Errorf("MarkLead of a session that does not run: %v %v", running, err)
	}
	if running, err := MarkLead(ws, ""); !running || err != nil {
		t.Errorf("clearing the lead: %v %v", running, err)
	}
	if ids := TargetIDs(ws); len(ids) != 0 {
		t.Errorf("TargetIDs of an empty workspace: %q", ids)
	}
}
