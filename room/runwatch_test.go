package room

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/runs"
)

// The room watches a pending run's worktree from its summary to /apply
// (where a monitor runs: Linux, not the portable build): not while an
// executor writes it again, and not after the apply.
func TestThePendingRunIsWatchedFromItsSummaryToApply(t *testing.T) {
	h := worktreeHarness(t, "y", "y", "y")
	monitor := runtime.GOOS == "linux" && buildTags == ""
	ctx := context.Background()
	var watchedWhileWriting []bool
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role == agents.RoleExecutor {
			if p := h.e.wt.Pending(); p != nil {
				watchedWhileWriting = append(watchedWhileWriting, p.Watched())
			}
			os.WriteFile(filepath.Join(r.Dir, "main.go"), []byte("package main\n\nfunc shout() {}\n"), 0o644)
		}
		return agents.Result{ExitCode: 0, FinalText: "done"}
	}
	for i := 0; i < 2; i++ { // the second adds to the pending run
		if _, err := h.e.Process(ctx, "/execute"); err != nil {
			t.Fatal(err)
		}
		r := h.e.wt.Pending()
		if r == nil {
			t.Fatalf("no pending run:\n%s", h.out.String())
		}
		if r.Watched() != monitor {
			t.Fatalf("after /execute %d: watched %v, want %v", i+1, r.Watched(), monitor)
		}
	}
	if len(watchedWhileWriting) != 2 || watchedWhileWriting[0] || watchedWhileWriting[1] {
		t.Fatalf("the run was watched while its executor wrote it: %v", watchedWhileWriting)
	}
	r := h.e.wt.Pending()
	if _, err := h.e.Process(ctx, "/apply"); err != nil {
		t.Fatal(err)
	}
	runs.WaitRemovals()
	if h.e.wt.Pending() != nil || r.Watched() {
		t.Fatalf("after /apply: pending %v, watched %v\n%s", h.e.wt.Pending(), r.Watched(), h.out.String())
	}
	if read(t, h.dir, "main.go") != "package main\n\nfunc shout() {}\n" {
		t.Fatalf("not applied:\n%s", h.out.String())
	}
}
