package view_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/hookinstall"
)

// targets' text with no session, view.PickSession's two ways and view.MarkLead's
// note for a session that is not running.
func TestTargetsReportPickAndMark(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // no user hooks
	t.Setenv(claudecode.NoRegistryEnv, "1")    // the hooks' words (registry_test.go has the others)
	var b strings.Builder
	if err := view.TargetsReport(&b, ws, nil, false, time.Now()); err != nil || !strings.HasPrefix(b.String(), "No running Claude Code session found for "+ws+".\nRun 'relay-baton hook install'") {
		t.Errorf("empty report %q %v", b.String(), err)
	}
	// Right after 'hook install' the missing piece is a session started
	// with the hooks, not the install.
	if _, err := hookinstall.Install(context.Background(), io.Discard, hookinstall.Options{Agent: "claude", Workspace: ws, Binary: "/usr/local/bin/relay-baton", WaitTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := view.TargetsReport(&b, ws, nil, false, time.Now()); err != nil || strings.Contains(b.String(), "Run 'relay-baton hook install'") ||
		!strings.Contains(b.String(), "The chat hooks are installed ("+filepath.Join(ws, ".claude", "settings.json")+"): start Claude Code there, or restart (resume) a session started before the install") {
		t.Errorf("report after hook install %q %v", b.String(), err)
	}
	if _, err := view.PickSession(context.Background(), ws, "../x"); err == nil || !strings.Contains(err.Error(), "UUID") {
		t.Errorf("a bad id: %v", err)
	}
	const id = "01234567-89ab-cdef-0123-456789abcdef"
	if got, err := view.PickSession(context.Background(), ws, id); got != id || err != nil {
		t.Errorf("PickSession(id) = %q, %v", got, err)
	}
	if _, err := view.PickSession(context.Background(), ws, ""); err == nil || !strings.Contains(err.Error(), conversation.ErrNoLiveSession.Error()) {
		t.Errorf("no lead: %v", err)
	}
	if running, err := view.MarkLead(ws, id); running || err != nil {
		t.Errorf("MarkLead of a session that does not run: %v %v", running, err)
	}
	if running, err := view.MarkLead(ws, ""); !running || err != nil {
		t.Errorf("clearing the lead: %v %v", running, err)
	}
	if ids := view.TargetIDs(ws); len(ids) != 0 {
		t.Errorf("TargetIDs of an empty workspace: %q", ids)
	}
}
