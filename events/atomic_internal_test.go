//go:build unix

package events

import (
	"path/filepath"
	"testing"
	"time"

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
