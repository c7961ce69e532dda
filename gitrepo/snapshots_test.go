package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// newRepo is a repository with one commit of main.go and old.txt.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := agenttest.GitRepo(t, map[string]string{"main.go": "package main\n", "old.txt": "old\n"})
	testkit.Git(t, dir, "add", ".")
	testkit.Git(t, dir, "commit", "-qm", "init")
	return dir
}

func touch(dir, name, content string) {
	os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
}

// gitState is what a snapshot must not change: the index file and the
// list of object files.
func gitState(t *testing.T, gitDir string) string {
	t.Helper()
	var b strings.Builder
	idx, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	fmt.Fprintf(&b, "index %x\n", idx)
	filepath.WalkDir(filepath.Join(gitDir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b.WriteString(p + "\n")
		}
		return nil
	})
	return b.String()
}

func TestSnapshotsDiffAStepAndLeaveTheRepositoryAlone(t *testing.T) {
	main := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	testkit.Git(t, main, "worktree", "add", "-q", wt)
	empty := t.TempDir()
	testkit.Git(t, empty, "init", "-q")
	for name, dir := range map[string]string{"repository": main, "linked worktree": wt, "no commits": empty} {
		t.Run(name, func(t *testing.T) {
			gitDir := strings.TrimSpace(testkit.Git(t, dir, "rev-parse", "--absolute-git-dir"))
			common := strings.TrimSpace(testkit.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"))
			touch(dir, "before.txt", "uncommitted before the step\n")
			os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
			touch(dir, ".ai-session/plan.md", "not part of any diff\n")
			idx, objs := gitState(t, gitDir), gitState(t, common)
			s := NewSnapshots(context.Background(), dir)
			start, err := s.Tree(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			touch(dir, "before.txt", "uncommitted before the step\nand changed in it\n")
			touch(dir, "new.txt", "new in the step\n")
			touch(dir, ".ai-session/plan.md", "changed, still not part of it\n")
			names, diff, err := s.Since(context.Background(), start)
			if err != nil {
				t.Fatal(err)
			}
			if names != "M before.txt\nA new.txt\n" {
				t.Fatalf("names %q", names)
			}
			if !strings.Contains(diff, "+and changed in it") || strings.Contains(diff, "+uncommitted before the step") || strings.Contains(diff, "plan.md") {
				t.Fatalf("diff:\n%s", diff)
			}
			s.Close()
			if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("snapshot folder left behind: %v", err)
			}
			if gitState(t, gitDir) != idx || gitState(t, common) != objs {
				t.Fatal("the snapshot changed the repository's index or objects")
			}
		})
	}
}

// BenchmarkStepSnapshot measures what a loop step adds for its exact diff:
// a tree of the working tree before the step, and one more plus the diff
// after it, in a repository of 2000 tracked files with one edited.
func BenchmarkStepSnapshot(b *testing.B) {
	dir := b.TempDir()
	run := func(args ...string) {
		if out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	for i := 0; i < 2000; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%40))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.go", i)), []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 100)), 0o644)
	}
	run("add", ".")
	run("commit", "-qm", "init")
	ctx := context.Background()
	s := NewSnapshots(ctx, dir)
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, err := s.Tree(ctx)
		if err != nil {
			b.Fatal(err)
		}
		touch(dir, "d00/f0000.go", fmt.Sprint("edit ", i, "\n"))
		if _, _, err := s.Since(ctx, start); err != nil {
			b.Fatal(err)
		}
	}
}
