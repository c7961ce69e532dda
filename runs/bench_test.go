package runs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchWorktreeSetupAndApply measures a run's set-up (Start) and
// apply (PlanApply + Apply) on repositories of 1,000 and 10,000 files
// (100,000 with RUNS_BENCH_100K=1), each with a 100,000-file ignored
// tree beside (node_modules/), side by side with the hand-run git
// commands that do the least of the same: git worktree add --detach,
// then git diff --binary HEAD | git apply in the worktree (set-up); git
// diff --binary in the worktree | git apply in the tree (apply). It
// prints the medians of RUNS_BENCH_N rounds (default 5). Run it with
//
//	RUNS_BENCH=1 go test ./runs -run TestBenchWorktreeSetupAndApply -v
func TestBenchWorktreeSetupAndApply(t *testing.T) {
	if os.Getenv("RUNS_BENCH") == "" {
		t.Skip("RUNS_BENCH=1 runs the benchmark")
	}
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("RUNS_BENCH_N")); err == nil && n > 0 {
		rounds = n
	}
	sizes := []int{1000, 10000}
	if os.Getenv("RUNS_BENCH_100K") != "" {
		sizes = append(sizes, 100000)
	}
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	t.Cleanup(WaitRemovals)
	ignored := 100000
	if n, err := strconv.Atoi(os.Getenv("RUNS_BENCH_IGNORED")); err == nil {
		ignored = n
	}
	for _, size := range sizes {
		dir := benchRepo(t, size, ignored)
		var ourSetup, handSetup, ourApply, handApply []time.Duration
		for round := 0; round < rounds; round++ {
			// The user's uncommitted work: 10 edited files, 5 untracked.
			userWork := func() {
				for i := 0; i < 10; i++ {
					write(t, dir, benchName(i), fmt.Sprintf("edited %d %d\n", i, round))
				}
				for i := 0; i < 5; i++ {
					write(t, dir, fmt.Sprintf("untracked/u%d.txt", i), "new\n")
				}
			}
			ours := func() {
				userWork()
				t0 := time.Now()
				r, err := Start(context.Background(), dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				ourSetup = append(ourSetup, time.Since(t0))
				for i := 100; i < 110; i++ { // the run edits 10 other files
					write(t, r.Worktree, benchName(i), fmt.Sprintf("run %d %d\n", i, round))
				}
				t0 = time.Now()
				p, err := r.PlanApply(context.Background())
				if err == nil {
					err = r.Apply(context.Background(), p)
				}
				if err != nil {
					t.Fatal(err)
				}
				ourApply = append(ourApply, time.Since(t0))
				r.Undo(context.Background(), mustPlanUndo(t, r))
				WaitRemovals()
				sh(t, dir, "git checkout -q -- . && git clean -qfd untracked")
			}
			hand := func() {
				userWork()
				wt := filepath.Join(t.TempDir(), "hand")
				patch := filepath.Join(t.TempDir(), "user.patch")
				t0 := time.Now()
				sh(t, dir, "git worktree add -q --detach "+wt+" HEAD")
				sh(t, dir, "git diff --binary HEAD > "+patch)
				sh(t, wt, "git apply "+patch)
				handSetup = append(handSetup, time.Since(t0))
				for i := 100; i < 110; i++ {
					write(t, wt, benchName(i), fmt.Sprintf("hand %d %d\n", i, round))
				}
				run := filepath.Join(t.TempDir(), "run.patch")
				t0 = time.Now()
				sh(t, wt, "git diff --binary HEAD -- "+benchFiles(100, 110)+" > "+run)
				sh(t, dir, "git apply "+run)
				handApply = append(handApply, time.Since(t0))
				sh(t, dir, "git worktree remove --force "+wt+" && git checkout -q -- . && git clean -qfd untracked")
			}
			// Alternate which goes first: the second finds a warmer cache.
			if round%2 == 0 {
				ours()
				hand()
			} else {
				hand()
				ours()
			}
		}
		t.Logf("%6d files (+%d ignored): set-up %v (by hand %v, %.2fx); apply %v (by hand %v, %.2fx)",
			size, ignored, median(ourSetup), median(handSetup), ratio(ourSetup, handSetup),
			median(ourApply), median(handApply), ratio(ourApply, handApply))
	}
}

func mustPlanUndo(t *testing.T, r *Run) *Plan {
	p, err := r.PlanUndo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func benchName(i int) string { return fmt.Sprintf("src/d%03d/f%05d.txt", i%500, i) }

func benchFiles(from, to int) string {
	var b []string
	for i := from; i < to; i++ {
		b = append(b, benchName(i))
	}
	return strings.Join(b, " ")
}

// benchRepo is a committed repository of n small files and an ignored
// node_modules of ignored files.
func benchRepo(t *testing.T, n, ignored int) string {
	t.Helper()
	dir := t.TempDir()
	sh(t, dir, "git init -q . && git config user.email t@t && git config user.name t")
	write(t, dir, ".gitignore", "node_modules/\n")
	for i := 0; i < n; i++ {
		write(t, dir, benchName(i), fmt.Sprintf("line one of %d\nline two\nline three\n", i))
	}
	for i := 0; i < ignored; i++ {
		write(t, dir, fmt.Sprintf("node_modules/p%03d/m%06d.js", i%1000, i), "module.exports = 1\n")
	}
	sh(t, dir, "git add -A && git commit -qm init")
	// An index written in the second its files were is racily clean
	// (git re-reads every file): as in a real repository, the files are
	// older than the index.
	time.Sleep(1100 * time.Millisecond)
	sh(t, dir, "git update-index --refresh -q >/dev/null; git status -s >/dev/null")
	return dir
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond)
}

func ratio(a, b []time.Duration) float64 { return float64(median(a)) / float64(max(median(b), 1)) }
