//go:build unix

package conversation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
)

// queueLaneMain is a relay-baton process running the queue lane once for
// the Codex thread tuiThread of workspace ws (the test kills it while
// codex runs).
func queueLaneMain(ws string) int {
	s, err := OpenSession(ws, tuiThread)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := deliverQueue(context.Background(), s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A relay-baton killed while `codex queue` runs (SIGKILL: no cleanup of
// any kind) must not lose the message: its claim shows as incomplete, the
// next lane puts it back in the inbox (recorded in errors.log) and
// delivers it, once.
func TestQueueLaneClaimSurvivesAKill(t *testing.T) {
	ws := loadedTUIThread(t)
	s, _ := OpenSession(ws, tuiThread)
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	m, err := s.Enqueue("t", "SURVIVE-THE-KILL")
	if err != nil {
		t.Fatal(err)
	}

	// A codex that says it started, then hangs.
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	hang := filepath.Join(dir, "codex")
	os.WriteFile(hang, []byte("#!/bin/sh\necho $$ > "+started+".tmp && mv "+started+".tmp "+started+"\nexec sleep 60\n"), 0o755)
	t.Setenv(agents.CodexBinEnv, hang)
	child := startChild(t, "RB_QUEUE_LANE="+ws)
	var codexPID int
	t.Cleanup(func() { // whatever failed: no process outlives the test
		child.Process.Kill()
		if codexPID > 0 {
			syscall.Kill(-codexPID, syscall.SIGKILL)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(started); err == nil {
			if codexPID, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || codexPID <= 0 {
				t.Fatalf("codex pid %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the queue lane never ran codex")
		}
	}
	// While codex runs, the claim is live and incomplete.
	if st, err := s.State(m.ID); err != nil || !st.Incomplete || st.Stalled || st.Delivered.Lane != LaneQueue {
		t.Fatalf("during codex queue: %+v %v", st, err)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if codexPID > 0 { // never -0: that is this test's own process group
		syscall.Kill(-codexPID, syscall.SIGKILL) // codex runs in its own process group
	}

	// Dead: incomplete and stalled, not "delivered".
	st, err := s.State(m.ID)
	if err != nil || !st.Incomplete || !st.Stalled || st.Delivered.DeliveredAt != nil {
		t.Fatalf("after the kill: %+v %v (want an incomplete, stalled claim)", st, err)
	}
	rec := recoverClaims(s)
	if len(rec) != 1 || rec[0].ID != m.ID || !rec[0].Requeue {
		t.Fatalf("recover: %+v", rec)
	}
	if st, _ := s.State(m.ID); !st.Queued || st.Ahead != 0 {
		t.Fatalf("after recovery: %+v, want first in the inbox", st)
	}
	b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	if !strings.Contains(string(b), "recovered "+m.ID+": claim of "+m.ID+" by queue") || !strings.Contains(string(b), "died before the message was handed over") {
		t.Errorf("errors.log:\n%s", b)
	}

	// The next run delivers it, once.
	bin, log := fakeCodex(t, 0)
	t.Setenv(agents.CodexBinEnv, bin)
	if ok, err := deliverQueue(context.Background(), s); !ok || err != nil {
		t.Fatalf("redelivery: %v %v", ok, err)
	}
	args, _ := os.ReadFile(log)
	if n := strings.Count(string(args), "[relay-baton chat message "+m.ID+" "); n != 1 || !strings.Contains(string(args), "SURVIVE-THE-KILL") {
		t.Fatalf("codex got the message %d times:\n%s", n, args)
	}
	st, _ = s.State(m.ID)
	if st.Delivered == nil || st.Delivered.Lane != LaneQueue || st.Delivered.DeliveredAt == nil || st.Incomplete {
		t.Fatalf("after redelivery: %+v", st)
	}
	if ok, _ := deliverQueue(context.Background(), s); ok {
		t.Fatal("delivered twice")
	}

	// codex fails: the claim is abandoned at once, the message is first in
	// line again, no claim is left behind.
	m2, _ := s.Enqueue("t", "BOUNCE")
	bad, _ := fakeCodex(t, 3)
	t.Setenv(agents.CodexBinEnv, bad)
	if ok, err := deliverQueue(context.Background(), s); ok || err == nil {
		t.Fatalf("failing codex: %v %v", ok, err)
	}
	if st, _ := s.State(m2.ID); !st.Queued || st.Ahead != 0 {
		t.Fatalf("after a failed codex queue: %+v", st)
	}
	if _, err := os.Lstat(markerPath(s, m2.ID)); err == nil {
		t.Fatal("a failed hand-over left its claim marker")
	}
	b, _ = os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	if !strings.Contains(string(b), "claim of "+m2.ID+" by queue abandoned") {
		t.Errorf("errors.log:\n%s", b)
	}
}
