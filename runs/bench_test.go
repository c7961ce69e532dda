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
// apply (PlanApply + Apply) on repositories of 1,000, 10,000 and 100,000
// tracked files, each with a 100,000-file ignored tree beside them
// (node_modules/) and the user's uncommitted work (10 edited tracked
// files, 5 untracked files), side by side with the hand-run git commands
// doing the least of the same:
//
//   - set-up by hand: git worktree add --detach <dir> HEAD, then
//     git diff HEAD --binary | git -C <dir> apply (the user's changes) and
//     the untracked files copied (git ls-files -o --exclude-standard |
//     tar);
//   - apply by hand: git diff --binary HEAD -- <the run's files> in the
//     worktree | git apply --3way in the user's tree.
//
// Apply is timed as /apply follows a run: the run takes more than a
// second (agentTime), and when it ends the room sets its watch over the
// worktree and prints the change summary (r.Watch and r.Changes, not
// timed; by hand, a git status in the worktree). That
// first look at the worktree re-reads, once, the files its set-up wrote
// in its last second (git's racy-git rule: a file as new as the index is
// compared by content).
//
// Each size runs RUNS_BENCH_N rounds (default 8, 4 at 100,000 files: an
// even number, as each side goes first in half of them and the second
// finds a warmer machine), the two sides interleaved, and prints the
// medians with the load average before and after.
// RUNS_BENCH_SIZES overrides the sizes (e.g. "1000,10000");
// RUNS_BENCH_NOWATCH=1 leaves the watch out (the apply then reads the
// worktree and the user's files again, as the one-shot relay-baton apply
// does, and the room where no monitor runs). The
// repositories are built once and kept in $TMPDIR/relay-baton-bench
// (RUNS_BENCH_DIR) for the next run. Run it with
//
//	RUNS_BENCH=1 go test ./runs -run TestBenchWorktreeSetupAndApply -v -timeout 2h
func TestBenchWorktreeSetupAndApply(t *testing.T) {
	if os.Getenv("RUNS_BENCH") == "" {
		t.Skip("RUNS_BENCH=1 runs the benchmark")
	}
	fixedRounds := 0
	if n, err := strconv.Atoi(os.Getenv("RUNS_BENCH_N")); err == nil && n > 0 {
		fixedRounds = n
	}
	sizes := []int{1000, 10000, 100000}
	if s := os.Getenv("RUNS_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("RUNS_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	ignored := 100000
	if n, err := strconv.Atoi(os.Getenv("RUNS_BENCH_IGNORED")); err == nil {
		ignored = n
	}
	noWatch := os.Getenv("RUNS_BENCH_NOWATCH") != "" // as the one-shot apply, and where no monitor runs
	cache := os.Getenv("RUNS_BENCH_DIR")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "relay-baton-bench")
	}
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir())
	t.Cleanup(WaitRemovals)
	ctx := context.Background()
	for _, size := range sizes {
		rounds := fixedRounds
		if rounds == 0 {
			rounds = 8
			if size >= 100000 {
				rounds = 4 // a checkout of 100,000 files takes this machine's minutes under load
			}
		}
		dir := benchRepo(t, cache, size, ignored)
		var ourSetup, handSetup, ourApply, handApply []time.Duration
		loads := []string{loadAverage()}
		for round := 0; round < rounds; round++ {
			// The user's uncommitted work: 10 edited files, 5 untracked.
			userWork := func() {
				for i := 0; i < 10; i++ {
					write(t, dir, benchName(i*(size/10)), fmt.Sprintf("edited %d %d\n", i, round))
				}
				for i := 0; i < 5; i++ {
					write(t, dir, fmt.Sprintf("untracked/u%d.txt", i), fmt.Sprintf("new %d\n", round))
				}
			}
			// The run's work: 10 other files edited.
			runWork := func(wt, who string) {
				for i := 0; i < 10; i++ {
					write(t, wt, benchName(i*(size/10)+1), fmt.Sprintf("%s %d %d\n", who, i, round))
				}
			}
			ours := func() {
				userWork()
				t0 := time.Now()
				r, err := Start(ctx, dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				ourSetup = append(ourSetup, time.Since(t0))
				agentTime()
				runWork(r.Worktree, "run")
				// What the room does when the executor ends (not
				// timed), as /apply follows it: its watch over the
				// worktree, then the change summary.
				if !noWatch {
					r.Watch()
				}
				if _, _, err := r.Changes(ctx); err != nil {
					t.Fatal(err)
				}
				t0 = time.Now()
				p, err := r.PlanApply(ctx)
				if err == nil {
					err = r.Apply(ctx, p)
				}
				if err != nil {
					t.Fatal(err)
				}
				ourApply = append(ourApply, time.Since(t0))
				if p.Writes() != 10 {
					t.Fatalf("the apply wrote %d files, not 10", p.Writes())
				}
				if err := r.Undo(ctx, mustPlanUndo(t, r)); err != nil {
					t.Fatal(err)
				}
				WaitRemovals()
				benchReset(t, dir)
			}
			hand := func() {
				userWork()
				tmp := t.TempDir()
				wt := filepath.Join(tmp, "hand")
				t0 := time.Now()
				sh(t, dir, "git worktree add -q --detach "+wt+" HEAD && "+
					"git diff HEAD --binary | git -C "+wt+" apply && "+
					"git ls-files -z -o --exclude-standard | tar --null -T - -cf - | tar -xf - -C "+wt)
				handSetup = append(handSetup, time.Since(t0))
				agentTime()
				runWork(wt, "hand")
				sh(t, wt, "git status --porcelain >/dev/null") // a look at the run's change (not timed)
				var files []string
				for i := 0; i < 10; i++ {
					files = append(files, benchName(i*(size/10)+1))
				}
				t0 = time.Now()
				sh(t, dir, "git -C "+wt+" diff --binary HEAD -- "+strings.Join(files, " ")+" | git apply --3way")
				handApply = append(handApply, time.Since(t0))
				sh(t, dir, "git worktree remove --force "+wt)
				benchReset(t, dir)
			}
			if round%2 == 0 {
				ours()
				hand()
			} else {
				hand()
				ours()
			}
		}
		loads = append(loads, loadAverage())
		t.Logf("%6d files, each round: set-up %v, by hand %v; apply %v, by hand %v", size, rounded(ourSetup), rounded(handSetup), rounded(ourApply), rounded(handApply))
		watched := "watched"
		if noWatch {
			watched = "not watched"
		}
		t.Logf("%6d files (+%d ignored), %d rounds, load %s: set-up %v (by hand %v, %.2fx); apply, %s, %v (by hand %v, %.2fx)",
			size, ignored, rounds, strings.Join(loads, " → "), median(ourSetup), median(handSetup), ratio(ourSetup, handSetup), watched,
			median(ourApply), median(handApply), ratio(ourApply, handApply))
	}
}

// agentTime stands for the executor's run, which lasts more than a second
// (its model's calls): it waits for the clock's next second, so the index
// the set-up wrote is older than what the run's change summary writes (git
// compares a file as new as its index by content: git's racy-git rule).
func agentTime() {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next) + 10*time.Millisecond)
}

// benchReset takes the user's work out of the bench repository: the
// index and files back to HEAD, the untracked folder gone.
func benchReset(t *testing.T, dir string) {
	sh(t, dir, "git reset -q && git checkout -q -- . && git clean -qfd untracked && git worktree prune")
}

// loadAverage is the one-minute load average (uptime's first figure),
// "?" where /proc/loadavg is not.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func mustPlanUndo(t *testing.T, r *Run) *Plan {
	p, err := r.PlanUndo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// benchName is the i-th tracked file: 100 files a folder.
func benchName(i int) string { return fmt.Sprintf("src/d%04d/f%06d.txt", i/100, i) }

// benchRepo is a committed repository of n small files and an ignored
// node_modules of ignored files, built once in cache and kept: a later
// run finds it (its "ready" file says it is whole) and resets it.
func benchRepo(t *testing.T, cache string, n, ignored int) string {
	t.Helper()
	dir := filepath.Join(cache, fmt.Sprintf("repo-%d-%d", n, ignored))
	if _, err := os.Stat(filepath.Join(dir, ".git", "bench-ready")); err == nil {
		benchReset(t, dir)
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "git init -q . && git config user.email t@t && git config user.name t && git config gc.auto 0 && git config maintenance.auto false")
	write(t, dir, ".gitignore", "node_modules/\n")
	for i := 0; i < n; i++ {
		write(t, dir, benchName(i), fmt.Sprintf("line one of %d\nline two\nline three\n", i))
	}
	for i := 0; i < ignored; i++ {
		write(t, dir, fmt.Sprintf("node_modules/p%03d/m%06d.js", i%1000, i), "module.exports = 1\n")
	}
	sh(t, dir, "git add -A && git commit -qm init && git gc -q")
	// An index written in the second its files were is racily clean
	// (git re-reads every file): as in a real repository, the files are
	// older than the index.
	time.Sleep(1100 * time.Millisecond)
	sh(t, dir, "git update-index --refresh -q >/dev/null; git status -s >/dev/null; touch .git/bench-ready")
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

// rounded is d to the millisecond, for the log.
func rounded(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, x := range d {
		out[i] = x.Round(time.Millisecond)
	}
	return out
}

// median is the middle value (of an even count, the mean of the two
// middle ones).
func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return m.Round(time.Millisecond)
}

func ratio(a, b []time.Duration) float64 { return float64(median(a)) / float64(max(median(b), 1)) }
