package conversation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
)

// Targets are sessions that can answer: by default only sessions whose
// recorded process still runs; --all (ListAllTargets) shows the others with
// their state; the lead is only ever a live session.
func TestTargetsLiveOnlyAndLead(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	procs := &testkit.FakeProcs{Boot: "b1"}
	ids := map[string]string{
		"live":   "11111111-0000-4000-8000-000000000001",
		"live2":  "22222222-0000-4000-8000-000000000002",
		"ended":  "33333333-0000-4000-8000-000000000003",
		"reused": "44444444-0000-4000-8000-000000000004",
		"legacy": "55555555-0000-4000-8000-000000000005",
		"trOnly": "66666666-0000-4000-8000-000000000006",
	}
	sess := map[string]*Session{}
	for name, id := range ids {
		s, err := OpenSession(ws, id)
		if err != nil {
			t.Fatal(err)
		}
		sess[name] = s
	}
	at := time.Now().Add(-time.Hour)
	register := func(name string, pid int, ago time.Duration) {
		t.Helper()
		s := sess[name]
		if err := s.Register(Registration{Cwd: ws, RegisteredAt: at.Add(-ago)}); err != nil {
			t.Fatal(err)
		}
		if pid > 0 {
			procs.Set(pid, procfacts.Stat{State: 'S', Start: uint64(pid) * 10})
			if err := s.RecordProcess(procfacts.Identify(procs, pid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	register("live", 101, 3*time.Minute)
	register("live2", 102, 4*time.Minute)
	register("ended", 103, 0) // the most recently active: a finished `claude -p`
	register("reused", 104, time.Minute)
	register("legacy", 0, 2*time.Minute)
	pd := claudecode.ProjectDir(ws)
	os.MkdirAll(pd, 0o700)
	os.WriteFile(filepath.Join(pd, ids["trOnly"]+".jsonl"), []byte("{}\n"), 0o600)
	// A one-shot 'claude -p' (relay-baton's own runs among them) leaves a
	// print-mode transcript and registers nothing: never listed, even with
	// --all.
	const printRun = "77777777-0000-4000-8000-000000000007"
	os.WriteFile(filepath.Join(pd, printRun+".jsonl"), []byte(`{"type":"user","entrypoint":"sdk-cli","sessionId":"`+printRun+`","message":{"role":"user","content":"plan"}}`+"\n"), 0o600)
	procs.Kill(103)
	procs.Set(104, procfacts.Stat{State: 'S', Start: 1}) // another process got pid 104

	ts, err := listTargets(context.Background(), ws, false, procs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].SessionID != ids["live"] || ts[1].SessionID != ids["live2"] {
		t.Fatalf("default targets = %+v, want live then live2", ts)
	}
	if !ts[0].Lead || ts[1].Lead || ts[0].State != procfacts.Live || ts[0].PID != 101 {
		t.Fatalf("default targets = %+v, want live as the lead", ts)
	}

	all, err := listTargets(context.Background(), ws, true, procs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]procfacts.Liveness{ids["live"]: procfacts.Live, ids["live2"]: procfacts.Live, ids["ended"]: procfacts.Ended, ids["reused"]: procfacts.Ended, ids["legacy"]: procfacts.Unknown, ids["trOnly"]: procfacts.Unknown}
	if len(all) != len(want) {
		t.Fatalf("all targets = %+v (want no %s, a print-mode run)", all, printRun)
	}
	for _, tg := range all {
		if tg.State != want[tg.SessionID] {
			t.Errorf("%s: state %s, want %s", tg.SessionID, tg.State, want[tg.SessionID])
		}
		if tg.Lead != (tg.SessionID == ids["live"]) {
			t.Errorf("%s: lead %v", tg.SessionID, tg.Lead)
		}
	}
	if all[0].SessionID != ids["trOnly"] && all[0].SessionID != ids["ended"] {
		t.Errorf("all targets not most recent first: %+v", all)
	}

	// A lead mark on a session that ended is ignored; on a live one, kept.
	if err := SetLead(ws, ids["ended"]); err != nil {
		t.Fatal(err)
	}
	if l := leadOf(t, ws, procs); l != ids["live"] {
		t.Errorf("lead %s with the mark on an ended session, want the most recent live one", l)
	}
	SetLead(ws, ids["live2"])
	if l := leadOf(t, ws, procs); l != ids["live2"] {
		t.Errorf("lead %s, want the marked live2", l)
	}
	// No live session: no lead at all.
	procs.Kill(101)
	procs.Kill(102)
	if l := leadOf(t, ws, procs); l != "" {
		t.Errorf("lead %s with no live session", l)
	}
	if ts, _ := listTargets(context.Background(), ws, false, procs); len(ts) != 0 {
		t.Errorf("targets with nothing live: %+v", ts)
	}
}

func leadOf(t *testing.T, ws string, procs procfacts.Source) string {
	t.Helper()
	ts, err := listTargets(context.Background(), ws, true, procs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if tg.Lead {
			return tg.SessionID
		}
	}
	return ""
}

// Lead (the real /proc): an error naming the way out when nothing runs.
func TestLeadNeedsALiveSession(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	s, _ := OpenSession(ws, "77777777-0000-4000-8000-000000000007")
	if err := s.Register(Registration{Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	if _, err := Lead(ws); !errors.Is(err, ErrNoLiveSession) {
		t.Fatalf("Lead with only an unrecorded session: %v", err)
	}
	if err := s.RecordProcess(procfacts.Identify(procfacts.System, os.Getpid())); err != nil {
		t.Fatal(err)
	}
	if l, err := Lead(ws); err != nil || l.SessionID != s.ID || l.State != procfacts.Live {
		t.Fatalf("Lead = %+v, %v; want the session running as this test", l, err)
	}
}

func TestRecordProcess(t *testing.T) {
	ws := t.TempDir()
	s, _ := OpenSession(ws, "88888888-0000-4000-8000-000000000008")
	if err := s.RecordProcess(procfacts.Process{PID: 5, Start: 50}); err == nil {
		t.Fatal("recorded a process without the session's chat folder")
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordProcess(procfacts.Process{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Process(); ok {
		t.Fatal("a zero process was recorded")
	}
	p := procfacts.Process{PID: 5, Start: 50, BootID: "b"}
	if err := s.RecordProcess(p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), processName)
	fi1, _ := os.Stat(path)
	if err := s.RecordProcess(p); err != nil { // unchanged: not rewritten
		t.Fatal(err)
	}
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi1, fi2) {
		t.Error("an unchanged process record was rewritten")
	}
	q := procfacts.Process{PID: 9, Start: 90, BootID: "b"} // the session resumed in a new process
	s.RecordProcess(q)
	if got, ok := s.Process(); !ok || got != q {
		t.Fatalf("Process() = %+v, %v, want %+v", got, ok, q)
	}
	// A symlink in its place is not written through.
	os.Remove(path)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.Symlink(target, path)
	s.RecordProcess(p)
	if _, err := os.Stat(target); err == nil {
		t.Fatal("process.json written through a symlink")
	}
	// A FIFO in its place does not block the reader.
	os.Remove(path)
	testkit.MakeFIFO(t, path)
	done := make(chan bool)
	go func() { _, ok := s.Process(); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("read a process from a FIFO")
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("Process() blocked on a FIFO")
	}
}
