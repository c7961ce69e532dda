package room

import (
	"context"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The room offers only running sessions: a finished one (a `claude -p` run
// registered by an older relay-baton, or a TUI that was closed) is neither
// the lead, nor in /targets, nor choosable with /target, and the message
// says why.
func TestRoomOffersOnlyRunningSessions(t *testing.T) {
	h := newHarness(t)
	live, _ := simSession(t, h, simSID)
	const endedID = "e11dedaa-0000-4000-8000-00000000000e"
	ended, _ := simSession(t, h, endedID)
	// The same pid with another start time: the process that registered it
	// is gone and the pid was reused.
	p := procfacts.ThisProcess()
	p.Start++
	if err := ended.RecordProcess(p); err != nil {
		t.Fatal(err)
	}
	if err := conversation.SetLead(h.dir, endedID); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/targets"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, " * "+live.ID) || strings.Contains(out, endedID) {
		t.Fatalf("/targets:\n%s", out)
	}
	if _, err := h.e.Process(ctx, "/target e11d"); err == nil || !strings.Contains(err.Error(), "session "+endedID+" is not running (ended)") {
		t.Fatalf("/target of an ended session: %v", err)
	}
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil || h.e.chat.Session != live.ID {
		t.Fatalf("/agent orchestrator: %v, session %s, want the running %s", err, h.e.chat.Session, live.ID)
	}
}
