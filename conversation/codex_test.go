//go:build unix

package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The rollouts recorded with the real codex 0.169.0 (transcript/testdata/codex).
const (
	execRollout = "../transcript/testdata/codex/rollout-0.169.0-exec-hook-delivery.jsonl"
	execThread  = "01a2333a-f018-71f2-a399-eccb85793c31"
	tuiRollout  = "../transcript/testdata/codex/rollout-0.169.0-tui-queue-delivery.jsonl"
	tuiThread   = "01a2333b-88b5-7f30-ab54-d2401a5fb8a1"
)

// fakeCodexHome makes a CODEX_HOME holding rollout copied under
// sessions/2026/12/01 with its recorded cwd replaced by cwd (the first
// cut lines only when keep > 0), and returns the rollout's path.
func fakeCodexHome(t *testing.T, home, src, thread, cwd string, keep int) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if keep > 0 {
		lines = lines[:keep]
	}
	var meta struct {
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &meta); err != nil || meta.Payload.Cwd == "" {
		t.Fatalf("session_meta of %s: %v", src, err)
	}
	text := strings.ReplaceAll(strings.Join(lines, ""), meta.Payload.Cwd, cwd)
	dir := filepath.Join(home, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rollout-2026-12-01T20-10-30-"+thread+".jsonl")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdWriterLock takes the flock codex holds on a loaded thread.
func holdWriterLock(t *testing.T, home, thread string) func() {
	t.Helper()
	dir := filepath.Join(home, "thread-writer-locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, thread+".lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

func TestCodexTargets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	other := t.TempDir()
	// The exec thread cut just after its turn's task_started: in a turn.
	b, _ := os.ReadFile(execRollout)
	n := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"type":"task_started"`) {
			n = i + 1
			break
		}
	}
	busy := fakeCodexHome(t, home, execRollout, execThread, filepath.Join(ws, "sub"), n)
	idle := fakeCodexHome(t, home, tuiRollout, tuiThread, ws, 0)
	fakeCodexHome(t, home, execRollout, "01a2333a-0000-7000-8000-000000000000", other, 0)
	release := holdWriterLock(t, home, tuiThread)
	defer release()

	// By default only live threads: the one a codex process holds.
	if ts, err := ListTargets(ws); err != nil || len(ts) != 1 || ts[0].SessionID != tuiThread || ts[0].State != procfacts.Live {
		t.Fatalf("live targets %+v %v", ts, err)
	}
	ts, err := ListAllTargets(ws)
	if err != nil {
		t.Fatal(err)
	}
	// A `codex exec` run no hook registered (relay-baton's own runs among
	// them) is never a target, like a `claude -p` run.
	if len(ts) != 1 {
		t.Fatalf("targets %+v, want the workspace's TUI thread only (not its unregistered exec run, not the other workspace's)", ts)
	}
	byID := map[string]Target{}
	for _, tg := range ts {
		byID[tg.SessionID] = tg
		if tg.Agent != AgentCodex {
			t.Errorf("%s: agent %q", tg.SessionID, tg.Agent)
		}
	}
	i := byID[tuiThread]
	if i.TranscriptPath != idle || i.Busy || !i.Loaded || !i.Waiting || !i.ChatCapable || !i.Lead {
		t.Errorf("TUI thread %+v", i)
	}
	release()
	if codex.Loaded(tuiThread) {
		t.Error("a released writer lock still reads as loaded")
	}
	// With the hooks, the SessionStart hook made the chat folder: chat-capable.
	s, _ := OpenSession(ws, execThread)
	if err := s.Register(Registration{TranscriptPath: busy, Cwd: filepath.Join(ws, "sub")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue("t", "hello"); err != nil {
		t.Fatal(err)
	}
	ts, _ = ListAllTargets(ws)
	if len(ts) != 2 {
		t.Errorf("after its registration the exec thread is a target: %+v", ts)
	}
	for _, tg := range ts {
		if tg.SessionID == execThread && (!tg.ChatCapable || tg.Depth != 1 || tg.Agent != AgentCodex || !tg.Busy || tg.TranscriptPath != busy || tg.Loaded || tg.State != procfacts.Ended || tg.Cwd != filepath.Join(ws, "sub")) {
			t.Errorf("registered exec thread %+v", tg)
		}
	}
	if !s.IsCodex() || LocateTranscript(s) != busy {
		t.Errorf("IsCodex %v, transcript %q", s.IsCodex(), LocateTranscript(s))
	}
	// A registration-less thread is found by its rollout too.
	s2, _ := OpenSession(ws, tuiThread)
	if LocateTranscript(s2) != idle {
		t.Errorf("rollout of %s: %q", tuiThread, LocateTranscript(s2))
	}
}

// loadedTUIThread makes a workspace and a CODEX_HOME whose TUI thread
// (tuiThread) is idle and loaded (its writer lock held until the test
// ends), and returns the workspace.
func loadedTUIThread(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	fakeCodexHome(t, home, tuiRollout, tuiThread, ws, 0)
	t.Cleanup(holdWriterLock(t, home, tuiThread))
	return ws
}

// fakeCodex writes a codex stand-in that records its arguments (one per
// line) to log and exits with code.
func fakeCodex(t *testing.T, code int) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "codex"), filepath.Join(dir, "args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + log + "\n"
	if code != 0 {
		script += "echo 'Error: failed to queue session message' >&2\nexit " + string(rune('0'+code)) + "\n"
	} else {
		script += "echo 'Queued message x for thread y.'\n"
	}
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

func TestDeliverQueue(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	fakeCodexHome(t, home, tuiRollout, tuiThread, ws, 0)
	s, _ := OpenSession(ws, tuiThread)

	// Not loaded: nothing happens, the message stays queued.
	bin, log := fakeCodex(t, 0)
	t.Setenv(agents.CodexBinEnv, bin)
	r, err := Send(ws, tuiThread, "t", "first")
	if err == nil {
		t.Fatalf("a thread neither loaded nor hooked took a message: %+v", r)
	}
	release := holdWriterLock(t, home, tuiThread)
	defer release()

	// Loaded and idle: Send creates the chat folder and hands it over.
	r, err = Send(ws, tuiThread, "t", "QUEUE-ME")
	if err != nil || r.QueueErr != nil {
		t.Fatalf("send: %v %v", err, r.QueueErr)
	}
	st, err := s.State(r.Message.ID)
	if err != nil || st.Delivered == nil || st.Delivered.Lane != LaneQueue {
		t.Fatalf("state %+v %v", st, err)
	}
	args, _ := os.ReadFile(log)
	a := strings.SplitN(string(args), "\n", 6)
	if len(a) < 5 || a[0] != "queue" || a[1] != "--thread" || a[2] != tuiThread || a[3] != "--message" || !strings.HasPrefix(a[4], "[relay-baton chat message "+r.Message.ID+" from t") || !strings.Contains(string(args), "<chat-message>\nQUEUE-ME\n</chat-message>") {
		t.Fatalf("codex was run with:\n%s", args)
	}

	// codex fails: the message goes back into the inbox, the error is kept.
	bad, _ := fakeCodex(t, 3)
	t.Setenv(agents.CodexBinEnv, bad)
	r, err = Send(ws, tuiThread, "t", "BOUNCE")
	if err != nil || r.QueueErr == nil || !strings.Contains(r.QueueErr.Error(), "failed to queue session message") {
		t.Fatalf("send: %v, queue error %v", err, r.QueueErr)
	}
	st, err = s.State(r.Message.ID)
	if err != nil || !st.Queued {
		t.Fatalf("after a failed codex queue the message is %+v %v, want queued", st, err)
	}
	if _, err := os.Stat(s.DeliveredPath(r.Message.ID)); err == nil {
		t.Error("the failed message also stays in delivered/")
	}
	if b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log")); !strings.Contains(string(b), "codex queue for thread "+tuiThread) {
		t.Errorf("errors.log: %s", b)
	}

	// Busy (the busy mark of the UserPromptSubmit hook): left for the Stop hook.
	t.Setenv(agents.CodexBinEnv, bin)
	if err := s.MarkBusy(); err != nil {
		t.Fatal(err)
	}
	if ok, err := deliverQueue(context.Background(), s); ok || err != nil {
		t.Fatalf("busy: delivered %v, %v", ok, err)
	}
	_ = s.ClearBusy()
	if ok, err := deliverQueue(context.Background(), s); !ok || err != nil {
		t.Fatalf("idle again: delivered %v, %v", ok, err)
	}
	if st, _ := s.State(r.Message.ID); st.Delivered == nil || st.Delivered.Lane != LaneQueue {
		t.Fatalf("the bounced message: %+v", st)
	}
	// No codex CLI: a clear error, the message stays queued.
	t.Setenv(agents.CodexBinEnv, "")
	t.Setenv("PATH", t.TempDir())
	r, err = Send(ws, tuiThread, "t", "NO-CLI")
	if err != nil || r.QueueErr == nil || !strings.Contains(r.QueueErr.Error(), "codex CLI not found") {
		t.Fatalf("send without codex: %v %v", err, r.QueueErr)
	}
	if st, _ := s.State(r.Message.ID); !st.Queued {
		t.Fatalf("without codex: %+v", st)
	}
}

func TestCodexTargetsSkipOldRollouts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	p := fakeCodexHome(t, home, tuiRollout, tuiThread, ws, 0)
	old := time.Now().Add(-codexTargetAge - time.Hour)
	os.Chtimes(p, old, old)
	if ts, _ := ListTargets(ws); len(ts) != 0 {
		t.Fatalf("an old rollout is a target: %+v", ts)
	}
	release := holdWriterLock(t, home, tuiThread)
	defer release()
	if ts, _ := ListTargets(ws); len(ts) != 1 || !ts[0].Loaded {
		t.Fatalf("an old but loaded thread: %+v", ts)
	}
}

// A send to a Codex thread whose `codex queue` hangs ends when its context
// does (Ctrl-C, a closed request), not after queueTimeout: the message goes
// back to the inbox for the thread's other lanes, and QueueErr says why.
func TestSendCodexEndsWithContext(t *testing.T) {
	ws := loadedTUIThread(t)
	bin, started := testkit.HangingExe(t, "codex")
	t.Setenv(agents.CodexBinEnv, bin)
	type sent struct {
		r   Receipt
		err error
	}
	got := testkit.Cancelled(t, "the send", started, func(ctx context.Context) sent {
		r, err := SendContext(ctx, ws, tuiThread, "t", "HANGS")
		return sent{r, err}
	})
	if got.err != nil {
		t.Fatalf("send: %v", got.err)
	}
	if !errors.Is(got.r.QueueErr, context.Canceled) {
		t.Fatalf("queue error %v, want one wrapping context.Canceled", got.r.QueueErr)
	}
	s, _ := OpenSession(ws, tuiThread)
	if st, err := s.State(got.r.Message.ID); err != nil || !st.Queued {
		t.Fatalf("after a cancelled hand-over the message is %+v %v, want queued", st, err)
	}
}
