package runs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

// One apply and one undo carry, in the same few git commands, paths with
// spaces and non-ASCII letters, a mode change, a new file in new
// folders and a deletion (kept in the user's tree); a link the run made
// is not applied.
func TestBatchedApplyCarriesEveryKindOfPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes and links: Unix")
	}
	dir := repo(t, map[string]string{"with space.txt": lines, "ünï/日本.txt": lines, "script.sh": "echo\n", "gone.txt": "bye\n", "z.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "with space.txt", strings.Replace(lines, "two", "TWO", 1))
	write(t, r.Worktree, "ünï/日本.txt", strings.Replace(lines, "six", "六", 1))
	if err := os.Chmod(filepath.Join(r.Worktree, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, r.Worktree, "new dir/ä b/new file.txt", "new\n")
	os.Remove(filepath.Join(r.Worktree, "gone.txt"))
	if err := os.Symlink("z.txt", filepath.Join(r.Worktree, "a link")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "z.txt", strings.Replace(lines, "one", "mine", 1)) // the user's edit, untouched by the run

	p := planApply(t, r)
	acts := map[string]string{}
	for _, pp := range p.Paths {
		acts[pp.Path] = pp.Action + pp.Conflict
	}
	if p.Conflicts != 1 || !strings.Contains(acts["a link"], "symbolic link") {
		t.Fatalf("plan %v", acts)
	}
	os.Remove(filepath.Join(r.Worktree, "a link"))
	p = planApply(t, r)
	acts = map[string]string{}
	for _, pp := range p.Paths {
		acts[pp.Path] = pp.Action + pp.Conflict
	}
	want := map[string]string{"with space.txt": ActWrite, "ünï/日本.txt": ActWrite, "script.sh": ActWrite, "new dir/ä b/new file.txt": ActCreate, "gone.txt": ActKeep}
	for path, act := range want {
		if acts[path] != act {
			t.Errorf("%q: %q, want %q", path, acts[path], act)
		}
	}
	if len(acts) != len(want) {
		t.Fatalf("plan %v", acts)
	}
	before := gitFacts(t, dir)
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, dir, "with space.txt"), "TWO") || !strings.Contains(read(t, dir, "ünï/日本.txt"), "六") || read(t, dir, "new dir/ä b/new file.txt") != "new\n" {
		t.Fatal("a file was not applied")
	}
	if fi, err := os.Stat(filepath.Join(dir, "script.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("script.sh's mode after apply: %v %v", fi.Mode(), err)
	}
	if read(t, dir, "gone.txt") != "bye\n" || !strings.Contains(read(t, dir, "z.txt"), "mine") {
		t.Fatal("the user's files were touched")
	}
	if gitFacts(t, dir) != before {
		t.Fatal("the apply changed the user's index, HEAD or branches")
	}
	if err := r.Undo(context.Background(), planUndo(t, r)); err != nil {
		t.Fatal(err)
	}
	if read(t, dir, "with space.txt") != lines || read(t, dir, "ünï/日本.txt") != lines || exists(dir, "new dir") {
		t.Fatal("the undo left the run's change")
	}
	if fi, err := os.Stat(filepath.Join(dir, "script.sh")); err != nil || fi.Mode().Perm()&0o100 != 0 {
		t.Fatalf("script.sh's mode after undo: %v %v", fi.Mode(), err)
	}
	if st := testkit.Git(t, dir, "status", "--porcelain"); st != " M z.txt\n" {
		t.Fatalf("git status after undo:\n%s", st)
	}
}

// A file the user changes between the preview and the yes is seen even
// when its size and modification time are what they were (set back): its
// change time moved. A settled file is not read again at the recheck, so
// the change time is what tells.
func TestApplySeesAChangeThatKeepsSizeAndTime(t *testing.T) {
	old := settled
	settled = 50 * time.Millisecond
	t.Cleanup(func() { settled = old })
	dir := repo(t, map[string]string{"a.txt": lines})
	r := start(t, dir, Options{})
	write(t, r.Worktree, "a.txt", strings.Replace(lines, "four", "FOUR", 1))
	fi, err := os.Stat(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !sysStat(fi).ok {
		t.Skip("no change time read here: every file is read again (TestApplyRefusesWhenTheTreeMovedAfterThePreview)")
	}
	for time.Since(time.Unix(0, sysStat(fi).ctime)) <= settled {
		time.Sleep(10 * time.Millisecond) // until the file is settled
	}
	p := planApply(t, r)
	if len(p.Paths) != 1 || !p.Paths[0].looked.stat.ok {
		t.Fatalf("plan %+v: the user's file is not settled", p.Paths)
	}
	// The same size, the same modification time: only its change time
	// says so.
	write(t, dir, "a.txt", strings.Replace(lines, "one", "ONE", 1))
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(context.Background(), p); !errors.Is(err, ErrMoved) {
		t.Fatalf("apply: %v", err)
	}
	if read(t, dir, "a.txt") != strings.Replace(lines, "one", "ONE", 1) {
		t.Fatal("the user's edit was overwritten")
	}
	// Previewed again: merged with the user's edit.
	p = planApply(t, r)
	if err := r.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "a.txt"); !strings.Contains(got, "FOUR") || !strings.Contains(got, "ONE") {
		t.Fatalf("after apply: %q", got)
	}
}

// The index Apply writes for checkout-index is one git reads as written:
// modes, ids, odd and long names (past the 4,095 bytes its length field
// holds), in git's order.
func TestWriteIndexIsReadByGit(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	blob := strings.TrimSpace(testkit.Git(t, dir, "rev-parse", "HEAD:a.txt"))
	long := strings.Repeat("d/", 2100) + "x"
	entries := []indexEntry{
		{"z.txt", "100644", blob}, {"new\nline", "100755", blob}, {"with space/ü.txt", "100644", blob}, {long, "100644", blob}, {"a.txt", "100644", blob},
	}
	index := filepath.Join(t.TempDir(), "index")
	if err := writeIndex(index, entries); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "-C", dir, "ls-files", "-s", "-z")
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, p := range []string{"a.txt", long, "new\nline", "with space/ü.txt", "z.txt"} {
		mode := "100644"
		if p == "new\nline" {
			mode = "100755"
		}
		want += mode + " " + blob + " 0\t" + p + "\x00"
	}
	if string(out) != want {
		t.Fatalf("git ls-files:\n%q\nwant\n%q", out, want)
	}
	for _, bad := range []string{".git/hooks/x", "a/.GIT/x", "a/../b", "./a", "/abs", "a//b", ".git. /x", "git~1/x", "", "a\x00b"} {
		if err := writeIndex(index, []indexEntry{{bad, "100644", blob}}); err == nil {
			t.Errorf("%q was written into an index", bad)
		}
	}
	if err := writeIndex(index, []indexEntry{{"l", "120000", blob}}); err == nil {
		t.Error("a link's mode was written")
	}
}

// Dropping a worktree removes git's record of it in the repository and
// nothing else, even when the worktree's .git file (the executor's to
// write) names a folder outside the repository that names it back.
func TestDropRemovesOnlyGitsRecordOfTheWorktree(t *testing.T) {
	dir := repo(t, map[string]string{"a.txt": "a\n"})
	r := start(t, dir, Options{})
	decoy := filepath.Join(t.TempDir(), "worktrees", "x")
	write(t, decoy, "gitdir", filepath.Join(r.Worktree, ".git")+"\n")
	write(t, decoy, "keep", "mine\n")
	real := read(t, r.Worktree, ".git")
	write(t, r.Worktree, ".git", "gitdir: "+decoy+"\n")
	if err := r.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !exists(decoy, "keep") {
		t.Fatal("a folder outside the repository was removed")
	}
	if n := worktrees(t, dir); n != 1 {
		t.Fatalf("git worktree list has %d entries after discard (the worktree's .git said %q)", n, real)
	}
	// Untampered: git's record goes, and the emptied worktrees/ folder.
	r = start(t, dir, Options{})
	if err := r.Discard(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := worktrees(t, dir); n != 1 || exists(dir, ".git/worktrees") {
		t.Fatalf("git worktree list has %d entries after discard; .git/worktrees left: %v", n, exists(dir, ".git/worktrees"))
	}
}
