//go:build unix

package room

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// runningSession starts a stand-in for the session's process (a sleep) and
// records it as the session's process; end kills it and reaps it.
func runningSession(t *testing.T, s *conversation.Session) (end func()) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(end)
	if err := s.RecordProcess(procfacts.Identify(procfacts.System, cmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	return end
}

// orchestratorOnRunningSession is a room whose active agent is the
// orchestrator, on a session whose process runs until end is called.
func orchestratorOnRunningSession(t *testing.T) (*harness, *conversation.Session, func()) {
	t.Helper()
	h := newHarness(t, "y")
	s, _ := simSession(t, h, simSID)
	end := runningSession(t, s)
	if _, err := h.e.Process(context.Background(), "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	return h, s, end
}

// A session that ended (the user quit it) is refused as `send` refuses it,
// with the next step; nothing is queued.
func TestChatRefusesAnEndedSession(t *testing.T) {
	h, s, end := orchestratorOnRunningSession(t)
	ctx := context.Background()
	end() // the user typed /exit in the session
	_, err := h.e.Process(ctx, "are you there?")
	if !errors.Is(err, conversation.ErrNoLiveSession) {
		t.Fatalf("a message to an ended session: %v, want %v", err, conversation.ErrNoLiveSession)
	}
	for _, want := range []string{"no running Claude Code session", "session " + simSID + " ended", "claude --resume " + simSID, "/agent orchestrator"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %q", want, err)
		}
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Errorf("%d messages queued for an ended session", q.Depth)
	}
	if strings.Contains(h.out.String(), "send this?") {
		t.Errorf("previewed a message for an ended session:\n%s", h.out)
	}
}

// A wait in progress ends when the session's process ends: the message
// stays queued, and the room says so and how it gets delivered.
func TestChatWaitEndsWithTheSession(t *testing.T) {
	h, s, end := orchestratorOnRunningSession(t)
	ctx := context.Background()
	go func() {
		waitQueued(t, s)
		end() // the session ends while the room waits
	}()
	if _, err := h.e.Process(ctx, "are you there?"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"the session ended; the message stays queued", "claude --resume " + simSID, "/cancel removes it"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if q, _ := s.Queue(); q.Depth != 1 {
		t.Errorf("queue depth %d, want the message still queued", q.Depth)
	}
}

// /agent orchestrator says when the lead it takes is not the one the room
// (or send) used last: a newer session took it.
func TestAgentOrchestratorSaysTheLeadMoved(t *testing.T) {
	h := newHarness(t, "y")
	first, _ := simSession(t, h, simSID)
	if err := first.Register(conversation.Registration{Cwd: h.dir, RegisteredAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	const newer = "7c1e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"
	simSession(t, h, newer)
	before := h.out.Len()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String()[before:]; !strings.Contains(out, "lead is now claude "+newer) || !strings.Contains(out, "it was "+simSID[:8]) {
		t.Errorf("no note of the lead's move in\n%s", out)
	}
	if strings.Contains(h.out.String()[:before], "lead is now") {
		t.Errorf("the first /agent orchestrator noted a move:\n%s", h.out.String()[:before])
	}
}
