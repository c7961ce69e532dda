//go:build unix

package safeio

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// The folder fsync of a durable write opens the folder by path: a FIFO
// swapped in for it fails at once.
func TestSyncDirFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dir")
	testkit.MakeFIFO(t, p)
	done := make(chan error, 1)
	go func() { done <- syncDir(p) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO synced as a folder")
		}
	case <-time.After(30 * time.Second): // a hang guard: open(2) on a FIFO never returns
		t.Fatal("syncDir blocked on a FIFO")
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		t.Fatalf("a folder: %v", err)
	}
}

// LockFile holds filelock's exclusive lock until its release: another
// handle on the file cannot take it meanwhile, and can after.
func TestLockFileExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log.jsonl")
	a, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	unlock := LockFile(a)
	if ok, err := filelock.Try(b); ok || err != nil {
		t.Fatalf("a second handle took the held lock: %v %v", ok, err)
	}
	unlock()
	if ok, err := filelock.Try(b); !ok || err != nil {
		t.Fatalf("the released lock was not free: %v %v", ok, err)
	}
}
