package runs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

// summarize is what the room does when the executor ends: its watch
// over the worktree, then the change summary.
func summarize(t *testing.T, r *Run) []string {
	t.Helper()
	r.Watch()
	ch, _, err := r.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range ch {
		paths = append(paths, string(c.Status)+" "+c.Path)
	}
	return paths
}

// planned is each path of a plan with its action or conflict.
func planned(p *Plan) string {
	var b []string
	for _, pp := range p.Paths {
		what := pp.Action
		if pp.Conflict != "" {
			what = "CONFLICT " + pp.Conflict
		}
		b = append(b, pp.Path+": "+what)
	}
	return strings.Join(b, "\n")
}

// settle waits until the files at names under dir (and the index) are
// older than the window a look trusts their stat after (see statAt),
// so a look keeps them.
func settle(t *testing.T, dir string, names ...string) {
	t.Helper()
	window := settled
	if fineFS(dir).ok {
		window = min(settled, settledFine)
	}
	for _, n := range append(names, ".git/index") {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			t.Fatal(err)
		}
		st := sysStat(fi)
		for st.ok && time.Since(time.Unix(0, max(st.ctime, st.mtime))) <= window {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// sh runs a shell command in dir: a process of the run's still writing
// its worktree after the summary.
func shIn(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// A write into the worktree after the summary (a process the run left
// behind) is what /apply applies: the watch reports it and the worktree
// is read again, whatever kind of write it is and however deep.
func TestAWriteAfterTheSummaryIsApplied(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"an edit deep down keeping size and time", "printf 'deep TWO\\n' > d1/d2/deep.txt.new && touch -r d1/d2/deep.txt d1/d2/deep.txt.new && cat d1/d2/deep.txt.new > d1/d2/deep.txt && touch -r d1/d2/deep.txt.new d1/d2/deep.txt && rm d1/d2/deep.txt.new", "d1/d2/deep.txt: write"},
		{"a new file in a new folder", "mkdir -p d1/d3/d4 && echo new > d1/d3/d4/new.txt", "d1/d3/d4/new.txt: create"},
		{"a file made executable", "chmod +x d1/d2/deep.txt", "d1/d2/deep.txt: write"},
		{"a file moved in", "echo moved > ../moved.tmp && mv ../moved.tmp d1/moved.txt", "d1/moved.txt: create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": lines, "d1/d2/deep.txt": "deep two\n"})
			r := start(t, dir, Options{})
			write(t, r.Worktree, "a.txt", strings.Replace(lines, "two", "TWO", 1))
			if got := summarize(t, r); len(got) != 1 {
				t.Fatalf("summary: %v", got)
			}
			linux := r.Watched()
			shIn(t, r.Worktree, tc.script)
			if r.Watched() {
				t.Fatal("the watch did not report the write")
			}
			p := planApply(t, r)
			if !strings.Contains(planned(p), tc.want) || !strings.Contains(planned(p), "a.txt: write") {
				t.Fatalf("watched %v; plan:\n%s", linux, planned(p))
			}
			if err := r.Apply(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A watched run whose worktree and the user's files are as the summary
// saw them is planned without a git process (none can start: PATH is
// empty), and applied as planned.
func TestAWatchedApplyReadsNothingAgain(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines, "sub/b.txt": "b\n"})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "two", "TWO", 1))
	write(t, r.Worktree, "sub/new.txt", "new\n")
	settle(t, dir, "a.txt")
	summarize(t, r)
	if !r.Watched() {
		t.Skip("no file-system monitor here: every look reads the worktree (TestTheRunsChangeReachesTheUserOnlyAfterApply)")
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	p, err := r.PlanApply(context.Background())
	if err != nil {
		t.Fatalf("the plan started a process: %v", err)
	}
	t.Setenv("PATH", path)
	if got := planned(p); got != "a.txt: write\nsub/new.txt: create" {
		t.Fatalf("plan:\n%s", got)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "a.txt") != strings.Replace(lines, "two", "TWO", 1) || read(t, dir, "sub/new.txt") != "new\n" {
		t.Fatal("not applied")
	}
}

// The user's edit made between the summary and /apply is seen, even
// one keeping the file's size and modification time: it is merged.
func TestAUserEditAfterTheSummaryIsSeen(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "nine", "NINE", 1))
	settle(t, dir, "a.txt")
	summarize(t, r)
	fi, err := os.Stat(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", strings.Replace(lines, "one", "ONE", 1))
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	settle(t, dir, "a.txt") // its stat is trusted again: only its change time tells
	p := planApply(t, r)
	if got := planned(p); got != "a.txt: merge" {
		t.Fatalf("plan:\n%s", got)
	}
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "a.txt"); got != strings.Replace(strings.Replace(lines, "one", "ONE", 1), "nine", "NINE", 1) {
		t.Fatalf("after apply: %q", got)
	}
}

// A file the user's ignore rules come to match between the summary and
// /apply is never touched: an untracked one (its rules are asked again),
// and a tracked one the user untracks meanwhile (the index changed).
func TestAFileIgnoredAfterTheSummaryIsNeverTouched(t *testing.T) {
	for _, tracked := range []bool{false, true} {
		name := map[bool]string{false: "untracked", true: "tracked then untracked"}[tracked]
		t.Run(name, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": lines, "conf.txt": "conf\n"})
			if !tracked {
				write(t, dir, "notes.txt", "mine\n") // untracked, not ignored: the worktree has it
			}
			file := map[bool]string{false: "notes.txt", true: "conf.txt"}[tracked]
			r := start(t, dir, Options{})
			write(t, r.Worktree, file, "the run's\n")
			settle(t, dir, file)
			summarize(t, r)
			if tracked {
				testkit.Git(t, dir, "rm", "-q", "--cached", file)
			}
			write(t, dir, ".gitignore", file+"\n")
			p := planApply(t, r)
			if p.Conflicts != 1 || !strings.Contains(planned(p), "ignored by git") {
				t.Fatalf("plan:\n%s", planned(p))
			}
			if err := r.Apply(context.Background(), p); err != ErrConflict {
				t.Fatalf("apply: %v", err)
			}
			if got := read(t, dir, file); got == "the run's\n" {
				t.Fatal("the ignored file was overwritten")
			}
		})
	}
}

// inotifyFDs counts this process's inotify instances.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "inotify") {
			n++
		}
	}
	return n
}

// The watch is let go (its inotify instance closed) when the run is
// applied, discarded or unwatched, and a second watch replaces the
// first.
func TestTheWatchIsLetGo(t *testing.T) {
	for _, end := range []string{"apply", "discard", "unwatch"} {
		t.Run(end, func(t *testing.T) {
			dir := repo(t, map[string]string{"a.txt": lines})
			r := start(t, dir, Options{})
			write(t, r.Worktree, "a.txt", strings.Replace(lines, "two", "TWO", 1))
			WaitRemovals()
			before := inotifyFDs(t)
			if err := r.Watch(); err != nil {
				t.Skipf("no monitor here: %v", err)
			}
			summarize(t, r) // a second watch
			WaitRemovals()
			if n := inotifyFDs(t); n != before+1 {
				t.Fatalf("%d inotify instances watching, want %d", n, before+1)
			}
			switch end {
			case "apply":
				if err := r.Apply(context.Background(), planApply(t, r)); err != nil {
					t.Fatal(err)
				}
			case "discard":
				if err := r.Discard(context.Background()); err != nil {
					t.Fatal(err)
				}
			case "unwatch":
				r.Unwatch()
			}
			WaitRemovals()
			if n := inotifyFDs(t); n != before || r.Watched() {
				t.Fatalf("%d inotify instances left, want %d", n, before)
			}
		})
	}
}
