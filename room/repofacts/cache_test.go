package repofacts

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

func scratch(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, dir, "add", ".")
	testkit.Git(t, dir, "commit", "-qm", "init")
	return dir
}

// TestGetSeesANewFileAtTheTop: the first Get waits for the first refresh;
// a new file at the top moves the top folder's signal, and the next Get
// counts it, fresh.
func TestGetSeesANewFileAtTheTop(t *testing.T) {
	dir := scratch(t)
	c := New(dir)
	defer c.Close()
	c.WaitWrong, c.CheapRefresh = 10*time.Minute, 10*time.Minute // a loaded machine's slow git changes no answer
	ctx := context.Background()
	if f, pending, fresh := c.Get(ctx, nil); pending || !fresh || f.Changed != 0 {
		t.Fatalf("clean: %+v pending %v fresh %v", f, pending, fresh)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, pending, fresh := c.Get(ctx, nil); pending || !fresh || f.Changed != 1 || f.DiffChars == 0 {
		t.Fatalf("after a new file: %+v pending %v fresh %v", f, pending, fresh)
	}
}

// TestNoRepositoryNoFacts: outside any repository the facts say git could
// not tell (Changed -1), without running git.
func TestNoRepositoryNoFacts(t *testing.T) {
	c := New("")
	defer c.Close()
	if f, _, _ := c.Get(context.Background(), nil); f.Changed != -1 {
		t.Fatalf("%+v", f)
	}
}

// TestCloseStopsTheRefreshes: once closed, a Get starts no refresh.
func TestCloseStopsTheRefreshes(t *testing.T) {
	dir := scratch(t)
	c := New(dir)
	var n atomic.Int32
	c.GatherFn = func(s *Signal) Facts { n.Add(1); return c.Gather(s) }
	c.Get(context.Background(), nil)
	c.Close()
	before := n.Load()
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c\n"), 0o644)
	c.Get(context.Background(), nil)
	c.Wait()
	if n.Load() != before || c.Refreshes() != int(before) {
		t.Fatalf("refreshed after Close: %d, then %d (counted %d)", before, n.Load(), c.Refreshes())
	}
}
