//go:build linux && !portable

package runs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A worktree with more folders than a monitor may watch has none (no
// watch is left set) and is read at every look, as without a watch.
func TestTooManyFoldersMeansNoMonitor(t *testing.T) {
	old := maxWatches
	maxWatches = func() int { return 3 }
	t.Cleanup(func() { maxWatches = old })
	dir := repo(t, map[string]string{"a.txt": lines, "d1/x.txt": "x\n", "d2/y.txt": "y\n", "d3/z.txt": "z\n"})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "two", "TWO", 1))
	WaitRemovals()
	before := inotifyFDs(t)
	if err := r.Watch(); !errors.Is(err, errTooManyFolders) {
		t.Fatalf("watch: %v", err)
	}
	if n := inotifyFDs(t); n != before || r.Watched() {
		t.Fatalf("%d inotify instances, want %d", n, before)
	}
	summarize(t, r)
	write(t, r.Worktree, "d2/y.txt", "Y\n")
	p := planApply(t, r)
	if got := planned(p); got != "a.txt: write\nd2/y.txt: write" {
		t.Fatalf("plan:\n%s", got)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}
