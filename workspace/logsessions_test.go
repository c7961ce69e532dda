package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

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
	testkit.MakeFIFO(t, LogPath(root))
	if got := LogSessions(root); got != nil {
		t.Errorf("a FIFO log: %q", got)
	}
}
