package runlock

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

// repo is a git repository with its .ai-session folder.
func repo(t *testing.T) (root, sd string) {
	t.Helper()
	root = t.TempDir()
	testkit.Git(t, root, "init", "-q")
	sd = filepath.Join(root, ".ai-session")
	if err := os.Mkdir(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	return root, sd
}

// TestOneRunAtATime: while one engine holds the lock (reentrantly, as a
// /continue loop does), another on the same repository is refused with
// the holder named, and sees it as held elsewhere; once the last release
// goes, nothing holds it and the record is gone.
func TestOneRunAtATime(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks here")
	}
	root, sd := repo(t)
	now := func() time.Time { return time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC) }
	var warned []string
	say := func(f string, a ...any) { warned = append(warned, f) }
	a, b := New(root, sd, true, now, say), New(root, sd, true, now, say)
	a.SetScreen("relay-baton chat")
	outer, err := a.Hold("codex", "continue")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := a.Hold("codex", "continue") // a step of the loop
	if err != nil || !a.Held() || a.HeldElsewhere() != nil {
		t.Fatalf("reentrant hold: %v, held %v", err, a.Held())
	}
	h := b.HeldElsewhere()
	if h == nil || h.Screen != "relay-baton chat" || h.Agent != "codex" || h.PID != os.Getpid() {
		t.Fatalf("the other engine sees %+v", h)
	}
	var held *HeldError
	if err := b.Refuse(); !errors.As(err, &held) || !strings.Contains(err.Error(), "codex /continue, pid") {
		t.Fatalf("refuse: %v", err)
	}
	if _, err := b.Hold("claude", "plan"); !errors.As(err, &held) {
		t.Fatalf("a second hold: %v", err)
	}
	inner()
	if HeldBy(root) == nil {
		t.Fatal("released by the inner release")
	}
	outer()
	outer() // a second call of the same release is nothing
	if HeldBy(root) != nil || a.Held() || b.Refuse() != nil {
		t.Fatalf("still held after the release: %+v", HeldBy(root))
	}
	if _, err := os.Stat(filepath.Join(sd, HolderFile)); !os.IsNotExist(err) {
		t.Fatalf("the holder's record outlived the lock: %v", err)
	}
	if len(warned) != 0 {
		t.Fatalf("warned %v", warned)
	}
}

// TestAReadOnlyEngineTakesNone: an engine that writes nothing takes no
// lock and sees none (a view of the room).
func TestAReadOnlyEngineTakesNone(t *testing.T) {
	root, sd := repo(t)
	ro := New(root, sd, false, time.Now, nil)
	release, err := ro.Hold("claude", "ask")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if ro.Held() || HeldBy(root) != nil {
		t.Fatal("a read-only engine took the lock")
	}
	w := New(root, sd, true, time.Now, nil)
	rel, err := w.Hold("claude", "ask")
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	if ro.HeldElsewhere() != nil {
		t.Fatal("a read-only engine reports a hold")
	}
}

// Another screen asking, again and again, whether a run holds the
// repository never makes a run's Hold fail: its question holds a shared
// lock for an instant (seen as "another agent run holds this repository"
// when the page polled while the terminal started a run).
func TestHoldWhileAnotherScreenAsks(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks here")
	}
	root, sd := repo(t)
	l := New(root, sd, true, time.Now, nil)
	release, err := l.Hold("codex", "execute") // the lock file exists from here on
	if err != nil {
		t.Fatal(err)
	}
	release()
	stop := make(chan struct{})
	asked := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				asked <- n
				return
			default:
			}
			HeldBy(root)
			n++
		}
	}()
	for i := range 200 {
		release, err := l.Hold("codex", "execute")
		if err != nil {
			close(stop)
			<-asked
			t.Fatalf("hold %d: %v", i, err)
		}
		release()
	}
	close(stop)
	if n := <-asked; n == 0 {
		t.Fatal("the other screen never asked")
	}
}
