package hook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/procfacts"
)

// darwinSample reads one of procfacts' recorded sysctl answers
// (procfacts/testdata/darwin/README.md says how they were built).
func darwinSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "procfacts", "testdata", "darwin", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One way of deciding: the hook's session mode and a session's liveness
// come out of macOS's facts as they do out of /proc.
func TestDecisionsOnDarwinFacts(t *testing.T) {
	src := procfacts.Recorded{
		Kinfo: map[int][]byte{4242: darwinSample(t, "kinfo_proc_node.bin")},
		Args:  map[int][]byte{4242: darwinSample(t, "procargs2_claude_print.bin")},
		Boot:  "5E7F3C1A-0000-4000-8000-000000000001",
	}
	env := map[string]string{"CLAUDE_PID": "4242", "CLAUDECODE": "1"}
	h := Detect(func(k string) string { return env[k] }, src, 1)
	if h.Mode != ModeStreamJSON || h.Process.PID != 4242 || h.Process.Start != 1764650000*1e6+123456 || h.Process.BootID != src.Boot {
		t.Fatalf("hook env %+v", h)
	}
	if got := h.Process.Check(src); got != procfacts.Live {
		t.Fatalf("the same process: %s", got)
	}
	reused := h.Process
	reused.Start++
	if got := reused.Check(src); got != procfacts.Ended {
		t.Fatalf("pid reused (another start time): %s", got)
	}
	other := h.Process
	other.BootID = "5E7F3C1A-0000-4000-8000-000000000000"
	if got := other.Check(src); got != procfacts.Ended {
		t.Fatalf("another boot: %s", got)
	}
	src.Kinfo[4242] = darwinSample(t, "kinfo_proc_zombie.bin")
	if got := h.Process.Check(src); got != procfacts.Ended {
		t.Fatalf("zombie: %s", got)
	}
	delete(src.Kinfo, 4242)
	if got := h.Process.Check(src); got != procfacts.Ended {
		t.Fatalf("gone: %s", got)
	}
	// Without CLAUDE_PID: the hook's parent is the shell Claude Code ran it
	// through; its parent is the session.
	src.Kinfo[4242] = darwinSample(t, "kinfo_proc_node.bin")
	if pid := sessionPidFromParent(src, 4242); pid != 4242 {
		t.Fatalf("session pid from a non-shell parent: %d", pid)
	}
}
