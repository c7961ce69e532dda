package conversation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

const testSID = "0b7e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5b"

func newSession(t testing.TB) *Session {
	t.Helper()
	s, err := OpenSession(t.TempDir(), testSID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEnqueueClaimOrderAndFiles(t *testing.T) {
	s := newSession(t)
	var ids []string
	for i := range 3 {
		m, err := s.Enqueue("room", fmt.Sprintf("message %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
		time.Sleep(2 * time.Millisecond) // distinct epoch-ms prefixes
	}
	q, err := s.Queue()
	if err != nil || q.Depth != 3 || q.Oldest.IsZero() || q.Age(time.Now()) < 0 {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	st, err := s.State(ids[2])
	if err != nil || !st.Queued || st.Ahead != 2 {
		t.Fatalf("state of third = %+v, %v", st, err)
	}
	for i, lane := range []Lane{LaneHook, LaneRewake, LaneMonitor} {
		res, err := s.Claim(lane)
		if err != nil || !res.OK {
			t.Fatalf("claim %d: %+v %v", i, res, err)
		}
		if res.Message.ID != ids[i] || res.Message.Text != fmt.Sprintf("message %d", i) || res.Message.Lane != lane || res.Message.DeliveredAt == nil {
			t.Errorf("claim %d = %+v, want oldest first", i, res.Message)
		}
		st, err := s.State(ids[i])
		if err != nil || st.Delivered == nil || st.Delivered.Lane != lane || st.Delivered.From != "room" {
			t.Errorf("state after claim = %+v, %v", st, err)
		}
		fi, err := os.Stat(s.DeliveredPath(ids[i]))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("delivered file mode: %v %v", fi, err)
		}
	}
	res, err := s.Claim(LaneHook)
	if err != nil || res.OK {
		t.Fatalf("claim on empty inbox = %+v %v", res, err)
	}
	for _, d := range []string{s.Dir(), s.InboxDir(), s.DeliveredDir(), s.OutboxDir()} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, err %v; want 0700", d, fi.Mode(), err)
		}
	}
	// The inbox file name follows the protocol.
	m, _ := s.Enqueue("", "x")
	names, _ := pending(s.InboxDir())
	if len(names) != 1 || names[0] != m.Inbox || !strings.HasSuffix(names[0], "-"+m.ID+".json") || len(strings.SplitN(names[0], "-", 2)[0]) != 13 || m.From != "relay-baton" {
		t.Errorf("inbox names = %v, message %+v", names, m)
	}
}

// Messages enqueued within one millisecond still come out in order.
func TestEnqueueSameMillisecondKeepsOrder(t *testing.T) {
	s := newSession(t)
	var ids []string
	for i := range 50 {
		m, err := s.Enqueue("room", fmt.Sprintf("burst %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	for i, want := range ids {
		res, err := s.Claim(LaneHook)
		if err != nil || !res.OK || res.Message.ID != want {
			t.Fatalf("claim %d = %s %v, want %s", i, res.Message.ID, err, want)
		}
	}
}

func TestCancel(t *testing.T) {
	s := newSession(t)
	m, _ := s.Enqueue("a", "cancel me")
	if err := s.Cancel(m.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(m.ID); !errors.Is(err, ErrNotQueued) {
		t.Errorf("second cancel: %v", err)
	}
	if _, err := s.State(m.ID); !errors.Is(err, ErrNotQueued) {
		t.Errorf("state after cancel: %v", err)
	}
	m2, _ := s.Enqueue("a", "delivered first")
	s.Claim(LaneHook)
	if err := s.Cancel(m2.ID); !errors.Is(err, ErrNotQueued) {
		t.Errorf("cancel of a delivered message: %v", err)
	}
	if err := s.Cancel("../../etc"); !errors.Is(err, errBadMessageID) {
		t.Errorf("cancel traversal: %v", err)
	}
}

func TestValidation(t *testing.T) {
	for _, id := range []string{"", "..", "../../etc/passwd", "0b7e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5b/../x", "not-a-uuid", "0b7e2c1a3f4d4e5f8a9b0c1d2e3f4a5b", strings.Repeat("a", 5000)} {
		if _, err := OpenSession(t.TempDir(), id); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("OpenSession(%q) = %v, want ErrBadSessionID", id, err)
		}
	}
	s := newSession(t)
	if _, err := s.Enqueue("a", strings.Repeat("x", MaxMessageBytes+1)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 KB") {
		t.Errorf("oversize: %v", err)
	}
	if _, err := s.Enqueue("a", strings.Repeat("x", MaxMessageBytes)); err != nil {
		t.Errorf("exactly 64 KB: %v", err)
	}
	if _, err := s.Enqueue("a", "  \n"); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	s2, _ := OpenSession(t.TempDir(), testSID)
	if _, err := s2.Enqueue("a", "hi"); !errors.Is(err, ErrNotChatReady) {
		t.Errorf("no inbox: %v", err)
	}
}

func TestSymlinksRefused(t *testing.T) {
	// A symlinked session folder.
	ws := t.TempDir()
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(elsewhere, "inbox"), 0o700)
	os.MkdirAll(filepath.Join(ws, workspace.ChatDir), 0o700)
	if err := os.Symlink(elsewhere, filepath.Join(ws, workspace.ChatDir, testSID)); err != nil {
		t.Fatal(err)
	}
	s, _ := OpenSession(ws, testSID)
	if _, err := s.Enqueue("a", "hi"); !errors.Is(err, ErrSymlink) {
		t.Errorf("enqueue via symlinked folder: %v", err)
	}
	if err := s.Ensure(); !errors.Is(err, ErrSymlink) {
		t.Errorf("ensure via symlinked folder: %v", err)
	}
	if s.ChatCapable() {
		t.Error("symlinked session reported chat-capable")
	}
	// A symlinked inbox.
	s2 := newSession(t)
	os.Remove(s2.InboxDir())
	os.Symlink(elsewhere, s2.InboxDir())
	os.WriteFile(filepath.Join(elsewhere, "1700000000000-aaaa1111.json"), []byte(`{"id":"aaaa1111","text":"x"}`), 0o600)
	res, err := s2.Claim(LaneHook)
	if !errors.Is(err, ErrSymlink) || res.OK {
		t.Errorf("claim via symlinked inbox: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "1700000000000-aaaa1111.json")); err != nil {
		t.Errorf("file behind the symlink was touched: %v", err)
	}
}

func TestUnreadableInboxFilesMovedAside(t *testing.T) {
	s := newSession(t)
	bad := map[string]string{
		"1000000000000-aaaa0001.json": "not json",
		"1000000000001-aaaa0002.json": `{"id":"aaaa0002","text":""}`,
		"1000000000002-bad name.json": `{"id":"x","text":"y"}`,
		"1000000000003-aaaa0004.json": `{"id":"aaaa0004","text":"` + strings.Repeat("y", MaxMessageBytes+10) + `"}`,
	}
	for n, c := range bad {
		os.WriteFile(filepath.Join(s.InboxDir(), n), []byte(c), 0o600)
	}
	os.WriteFile(filepath.Join(s.InboxDir(), ".tmp-in-progress"), []byte("partial"), 0o600)
	good, _ := s.Enqueue("a", "the good one")
	res, err := s.Claim(LaneHook)
	if err != nil || !res.OK || res.Message.ID != good.ID {
		t.Fatalf("claim = %+v, %v; want the good message", res, err)
	}
	if len(res.Rejected) != 4 {
		t.Errorf("rejected = %+v, want 4", res.Rejected)
	}
	rej, _ := os.ReadDir(s.RejectedDir())
	if len(rej) != 4 {
		t.Errorf("rejected/ holds %d files, want 4", len(rej))
	}
	if _, err := os.Stat(filepath.Join(s.InboxDir(), ".tmp-in-progress")); err != nil {
		t.Errorf("a producer's temp file was touched: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	if !strings.Contains(string(log), "not a JSON message") {
		t.Errorf("errors.log = %q", log)
	}
	for _, f := range rej {
		if _, err := os.Stat(s.DeliveredPath(strings.TrimSuffix(f.Name(), ".json"))); err == nil {
			t.Errorf("rejected file also delivered: %s", f.Name())
		}
	}
}

func TestDuplicateIDNotOverwritten(t *testing.T) {
	s := newSession(t)
	for i, n := range []string{"1000000000000-dup00001.json", "1000000000001-dup00001.json"} {
		os.WriteFile(filepath.Join(s.InboxDir(), n), fmt.Appendf(nil, `{"id":"dup00001","text":"copy %d"}`, i), 0o600)
	}
	a, _ := s.Claim(LaneHook)
	b, _ := s.Claim(LaneHook)
	if !a.OK || !b.OK || a.Message.ID == b.Message.ID || a.Message.Text == b.Message.Text {
		t.Fatalf("claims = %+v / %+v", a.Message, b.Message)
	}
	ents, _ := os.ReadDir(s.DeliveredDir())
	if len(ents) != 2 {
		t.Errorf("delivered holds %d files, want 2", len(ents))
	}
}

func TestConcurrentClaimersInProcess(t *testing.T) {
	s := newSession(t)
	const n = 300
	for i := range n {
		if _, err := s.Enqueue("a", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				res, err := s.Claim(LaneHook)
				if err != nil {
					t.Error(err)
					return
				}
				if !res.OK {
					return
				}
				mu.Lock()
				seen[res.Message.Text]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("claimed %d distinct, want %d", len(seen), n)
	}
	for k, v := range seen {
		if v != 1 {
			t.Errorf("message %s claimed %d times", k, v)
		}
	}
}

func TestBusyAndWaitClaim(t *testing.T) {
	s := newSession(t)
	if s.Busy(time.Now()) {
		t.Fatal("busy before any mark")
	}
	if err := s.MarkBusy(); err != nil {
		t.Fatal(err)
	}
	if !s.Busy(time.Now()) || s.Busy(time.Now().Add(busyTTL+time.Second)) {
		t.Fatal("busy mark not set, or does not expire")
	}
	m, _ := s.Enqueue("a", "wait for idle")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	res, err := s.waitClaim(ctx, LaneRewake, true, 50*time.Millisecond)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || res.OK {
		t.Fatalf("claimed while busy: %+v %v", res, err)
	}
	if st, _ := s.State(m.ID); !st.Queued {
		t.Fatal("a timed-out waiter stranded the message")
	}
	// The waiter's poll is an hour (and the busy mark's TTL far off): only
	// fsnotify, seeing the mark cleared, can wake it before the guard.
	got := make(chan ClaimResult, 1)
	go func() {
		res, _ := s.waitClaim(context.Background(), LaneRewake, true, time.Hour)
		got <- res
	}()
	time.Sleep(100 * time.Millisecond) // most often armed by now; if not, it claims on its first look
	s.ClearBusy()
	select {
	case res := <-got:
		if !res.OK || res.Message.ID != m.ID || res.Message.Lane != LaneRewake {
			t.Fatalf("claim = %+v", res)
		}
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("waiter did not claim after the busy mark was cleared: fsnotify did not wake it")
	}
}

func TestWaiterLock(t *testing.T) {
	s := newSession(t)
	l, ok, err := s.lockWaiter()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if !s.Waiting() {
		t.Error("Waiting false while the lock is held")
	}
	if _, ok2, _ := s.lockWaiter(); ok2 {
		t.Error("second waiter got the lock")
	}
	l.Release()
	if s.Waiting() {
		t.Error("Waiting true after release")
	}
}

func TestRegistrationTargetsAndLead(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	a, _ := OpenSession(ws, "aaaaaaaa-0000-4000-8000-000000000001")
	b, _ := OpenSession(ws, "bbbbbbbb-0000-4000-8000-000000000002")
	// a: registered with a transcript; b: only a transcript under projects/<slug>.
	tr := filepath.Join(t.TempDir(), "a.jsonl")
	os.WriteFile(tr, []byte("{}\n"), 0o600)
	if err := a.Register(Registration{TranscriptPath: tr, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	a.RecordProcess(procfacts.Identify(procfacts.System, os.Getpid())) // a runs (as this test)
	pd := claudecode.ProjectDir(ws)
	os.MkdirAll(pd, 0o700)
	trB := filepath.Join(pd, b.ID+".jsonl")
	os.WriteFile(trB, []byte("{}\n"), 0o600)
	future := time.Now().Add(time.Hour)
	os.Chtimes(trB, future, future)
	a.Enqueue("x", "one")
	ts, err := ListAllTargets(ws)
	if err != nil || len(ts) != 2 {
		t.Fatalf("targets = %+v, %v", ts, err)
	}
	if ts[0].SessionID != b.ID || ts[0].ChatCapable || ts[0].TranscriptPath != trB {
		t.Errorf("first target = %+v, want b (most recent, not chat-capable)", ts[0])
	}
	if ts[1].SessionID != a.ID || !ts[1].ChatCapable || ts[1].Depth != 1 || ts[1].TranscriptPath != tr || !ts[1].Lead {
		t.Errorf("second target = %+v, want a: chat-capable lead with 1 queued", ts[1])
	}
	if err := SetLead(ws, b.ID); err != nil {
		t.Fatal(err)
	}
	if l, _ := Lead(ws); l.SessionID != a.ID {
		t.Errorf("lead = %s after SetLead(b), want a: b has no process known to run", l.SessionID)
	}
	if got := LocateTranscript(b); got != trB {
		t.Errorf("LocateTranscript(b) = %q, want the slug path %q", got, trB)
	}
}

func TestResolveWorkspace(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, workspace.ChatDir), 0o700)
	sub := filepath.Join(ws, "a", "b")
	os.MkdirAll(sub, 0o700)
	if got, _ := workspace.Resolve(sub); got != ws {
		t.Errorf("workspace.Resolve = %q, want %q", got, ws)
	}
}

func TestIDShapes(t *testing.T) {
	for id, want := range map[string]bool{testSID: true, strings.ToUpper(testSID): true, "0b7e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5g": false, "0b7e2c1a-3f4d-4e5f-8a9b_0c1d2e3f4a5b": false, "": false} {
		if got := ValidSessionID(id) == nil; got != want {
			t.Errorf("ValidSessionID(%q) ok = %v", id, got)
		}
	}
	for id, want := range map[string]bool{"ab12cd34": true, "a_b-c": true, "-ab": false, "a/b": false, "..": false, "a.b": false, strings.Repeat("a", 65): false, "": false} {
		if got := validMessageID(id) == nil; got != want {
			t.Errorf("validMessageID(%q) ok = %v", id, got)
		}
	}
}

func TestClearBusyOlderThan(t *testing.T) {
	s := newSession(t)
	s.MarkBusy()
	s.clearBusyOlderThan(time.Minute)
	if !s.Busy(time.Now()) {
		t.Fatal("a fresh mark was cleared")
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(filepath.Join(s.Dir(), "busy"), old, old)
	s.clearBusyOlderThan(time.Minute)
	if s.Busy(time.Now()) {
		t.Fatal("a stale mark was kept")
	}
}

// TestOwnFoldersAreIgnoredByGit: relay-baton's state folders carry a
// .gitignore of their own, so `git add -A` never picks up the log, raw agent
// output or inbox files; a .gitignore the user put there is kept.
func TestOwnFoldersAreIgnoredByGit(t *testing.T) {
	root := t.TempDir()
	d, err := workspace.EnsureSessionDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d, ".gitignore")); err != nil || !strings.Contains(string(b), "\n*\n") {
		t.Fatalf(".ai-session/.gitignore: %q %v", b, err)
	}
	s, err := OpenSession(root, "3f2a9c4e-8b1d-4e6f-9a0b-1c2d3e4f5a6b")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, workspace.ChatDir, ".gitignore")); err != nil || !strings.Contains(string(b), "\n*\n") {
		t.Fatalf("session-chat/.gitignore: %q %v", b, err)
	}
}
