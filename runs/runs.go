// Package runs keeps each executor run in a git worktree of its own, so
// the user's tree stays theirs until they apply: Start makes the worktree
// outside the repository (the user's cache folder), on a detached HEAD
// (no branch, no commit), holding what the user sees (HEAD plus their
// uncommitted and untracked files; ignored files only when the user's own
// config lists them); Changes and Diff say what the run did; Apply brings
// it into the user's files by a three-way merge, all or nothing; Undo
// takes out exactly what was applied, or discards a run not applied.
// Watch, set by the room when the executor ends, keeps what the change
// summary read for the apply while nothing changes (watch.go).
//
// Each run has a record (run.json, written atomically) and a private
// index and object folder beside its worktree, with the repository's
// objects as an alternate: the trees of the run (where it started, what
// it left, what apply wrote) live there, and the repository's index, HEAD
// and refs are never written. While an executor writes a run, its room
// holds the run's lock (Hold): apply, undo and discard are refused in
// every process meanwhile. It knows no terminal: the room and the
// one-shot commands render what it returns.
package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/safeio"
)

// States of a run's record.
const (
	// Pending: the worktree holds the run's work, not applied.
	Pending = "pending"
	// Applied: the work is in the user's tree; the worktree is gone and
	// the record stays for Undo.
	Applied = "applied"
)

// Run is one executor run's record.
type Run struct {
	ID       string    `json:"id"`
	Root     string    `json:"root"`     // the user's work tree
	Worktree string    `json:"worktree"` // the run's worktree
	Head     string    `json:"head"`     // HEAD when the run started
	Base     string    `json:"base"`     // the user's tree when the run started (tracked and untracked, not ignored)
	State    string    `json:"state"`
	Started  time.Time `json:"started"`
	PID      int       `json:"pid"`               // the relay-baton that started it
	Agent    string    `json:"agent,omitempty"`   // the executor
	Command  string    `json:"command,omitempty"` // the room command (execute, continue, handoff)
	Copied   []string  `json:"copied,omitempty"`  // ignored paths copied in from the user's config
	Linked   []string  `json:"linked,omitempty"`  // ignored paths linked from the user's tree
	// Files is how many files the run had changed when last looked at
	// (Changes): what a second screen shows without reading the worktree.
	Files int `json:"files"`
	// After is the run's tree when it was applied.
	After     string        `json:"after,omitempty"`
	AppliedAt time.Time     `json:"applied_at,omitzero"`
	Wrote     []AppliedFile `json:"wrote,omitempty"`

	dir     string // the record's folder: run.json, index, objects
	objects string // the repository's object folder (repoObjects)

	diffMu   sync.Mutex
	lastDiff treePair // the last tree diff read (treeDiff)

	// The room's watch over the worktree and its look at the user's
	// files (Watch); the user's index file (its stat tells whether what
	// git tracks there changed).
	watchMu   sync.Mutex
	watch     *watch
	look      *look
	indexPath string
	fineOnce  sync.Once
	fineRoot  fineDev
}

// AppliedFile is one file Apply wrote: what it held before ("" blob:
// absent) and what Apply left, so Undo can take out exactly that.
type AppliedFile struct {
	Path       string   `json:"path"`
	BeforeBlob string   `json:"before_blob,omitempty"`
	BeforeMode string   `json:"before_mode,omitempty"`
	AfterBlob  string   `json:"after_blob"`
	AfterMode  string   `json:"after_mode"`
	MadeDirs   []string `json:"made_dirs,omitempty"` // folders Apply made for a new file, innermost first
}

// SetupTimeout bounds one git command of a run's set-up or apply (a
// checkout of a large tree takes longer than a query).
const SetupTimeout = 10 * time.Minute

// Options are the user's choices for a new run.
type Options struct {
	// Copy lists ignored paths (relative to the root, slash-separated)
	// copied into the worktree: the user's own config, never a
	// repository's.
	Copy []string
	// Link lists ignored folders linked (a symbolic link) from the
	// worktree to the user's tree.
	Link []string
	// Agent and Command are recorded for runs and the room's words.
	Agent, Command string
}

// ErrNoGit says git is not installed: there is no worktree (the room
// offers --in-place).
var ErrNoGit = errors.New("git is not installed: an executor run cannot have a worktree of its own (--in-place runs it in your tree)")

// ErrNoCommit says the repository has no commit yet: a worktree needs one.
var ErrNoCommit = errors.New("the repository has no commit yet: a worktree starts from HEAD (make a first commit, or run --in-place)")

// CacheDir is where runs live: os.UserCacheDir()/relay-baton/worktrees,
// or $RELAY_BATON_WORKTREES when set (tests, and users who want them
// elsewhere).
func CacheDir() (string, error) {
	if d := os.Getenv("RELAY_BATON_WORKTREES"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for worktrees: %w", err)
	}
	return filepath.Join(d, "relay-baton", "worktrees"), nil
}

// RepoDir is the folder of the runs of the work tree root:
// CacheDir/<hash of the root's path>.
func RepoDir(root string) (string, error) {
	c, err := CacheDir()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(c, hex.EncodeToString(h[:6])), nil
}

// inside reports whether path is root or below it (links resolved where
// they exist).
func inside(root, path string) bool {
	real := func(p string) string {
		p, _ = filepath.Abs(p)
		for q, rest := p, ""; ; {
			if r, err := filepath.EvalSymlinks(q); err == nil {
				return filepath.Join(r, rest)
			}
			parent := filepath.Dir(q)
			if parent == q {
				return p
			}
			rest = filepath.Join(filepath.Base(q), rest)
			q = parent
		}
	}
	rel, err := filepath.Rel(real(root), real(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// recordDir is a run's record folder beside its worktree.
func recordDir(repoDir, id string) string { return filepath.Join(repoDir, id+".run") }

// git runs git in dir with the run's private index and objects.
func (r *Run) git(ctx context.Context, dir, index string, args ...string) (string, error) {
	objs, err := r.repoObjects(ctx)
	if err != nil {
		return "", err
	}
	env := []string{"GIT_OBJECT_DIRECTORY=" + filepath.Join(r.dir, "objects"), "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objs}
	if index != "" {
		env = append(env, "GIT_INDEX_FILE="+index)
	}
	return gitrepo.Cmd{Root: dir, Env: env, Timeout: SetupTimeout}.Run(ctx, append([]string{"-c", "core.longpaths=true"}, args...)...)
}

// repoObjects is the repository's object folder (shared by its
// worktrees), asked of git once.
func (r *Run) repoObjects(ctx context.Context) (string, error) {
	if r.objects != "" {
		return r.objects, nil
	}
	s, err := gitrepo.Run(ctx, r.Root, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	r.objects = filepath.Join(strings.TrimSpace(s), "objects")
	return r.objects, nil
}

// userIndex and runIndex are the private indexes of the user's tree (its
// record at the start) and of the worktree.
func (r *Run) userIndex() string { return filepath.Join(r.dir, "user-index") }
func (r *Run) runIndex() string  { return filepath.Join(r.dir, "run-index") }

// Dir is the run's record folder.
func (r *Run) Dir() string { return r.dir }

// excludes keep relay-baton's own folders out of every tree of a run.
var excludes = []string{":(exclude).ai-session", ":(exclude).claude/session-chat"}

// snapshot records the tree at dir (tracked and untracked files git does
// not ignore) through the private index and returns its id.
func (r *Run) snapshot(ctx context.Context, dir, index string) (string, error) {
	if _, err := r.git(ctx, dir, index, append([]string{"add", "-A", "--", "."}, excludes...)...); err != nil {
		return "", err
	}
	id, err := r.git(ctx, dir, index, "write-tree")
	return strings.TrimSpace(id), err
}

// Start makes a run's worktree for the work tree root and records it:
// Reserve then Setup (which asks for HEAD itself: Reserve's early check,
// for a preview, is not made again).
func Start(ctx context.Context, root string, o Options) (*Run, error) {
	r, err := reserve(root, false)
	if err != nil {
		return nil, err
	}
	if err := r.Setup(ctx, o); err != nil {
		return nil, err
	}
	return r, nil
}

// Reserve names a new run's worktree and makes its empty folder (an
// agent's preview names it, and its working directory must exist), with
// nothing else done: Setup fills it on a yes, Cancel takes it away.
func Reserve(root string) (*Run, error) { return reserve(root, true) }

// reserve is Reserve, HEAD asked for when head is true.
func reserve(root string, head bool) (*Run, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	if head && gitrepo.Head(context.Background(), root) == "" {
		return nil, ErrNoCommit
	}
	repoDir, err := RepoDir(root)
	if err != nil {
		return nil, err
	}
	if inside(root, repoDir) {
		return nil, fmt.Errorf("the worktrees folder %s is inside the repository: set RELAY_BATON_WORKTREES to a folder outside it", repoDir)
	}
	if err := os.MkdirAll(repoDir, 0o700); err != nil {
		return nil, fmt.Errorf("make the worktrees folder: %w", err)
	}
	sweep(repoDir)
	id := time.Now().UTC().Format("20060102-150405") + "-" + events.NewUUID()[:6]
	r := &Run{ID: id, Root: root, Worktree: filepath.Join(repoDir, id), dir: recordDir(repoDir, id)}
	if err := os.Mkdir(r.Worktree, 0o700); err != nil {
		return nil, fmt.Errorf("make the worktree folder: %w", err)
	}
	return r, nil
}

// Reserved reports whether the run is reserved and not set up.
func (r *Run) Reserved() bool { return r.State == "" }

// Cancel removes a reserved run's empty folder.
func (r *Run) Cancel() {
	if r.Reserved() {
		os.Remove(r.Worktree)
	}
}

// Setup makes the reserved run's worktree: the user's tree recorded (its
// Base), HEAD checked out on a detached HEAD, the user's changes and
// untracked files brought in, the ignored paths of o copied or linked,
// and the record written. On an error nothing is left.
func (r *Run) Setup(ctx context.Context, o Options) error {
	if !r.Reserved() {
		return errors.New("the run is set up already")
	}
	root := r.Root
	// One git call for what set-up asks of the repository: the common
	// folder (its objects), the index, HEAD.
	facts, err := gitrepo.Run(ctx, root, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-path", "index", "--verify", "-q", "HEAD")
	lines := strings.Split(strings.TrimSpace(facts), "\n")
	if err != nil || len(lines) != 3 {
		r.Cancel()
		return ErrNoCommit
	}
	r.objects = filepath.Join(lines[0], "objects")
	userIndex, head := lines[1], lines[2]
	r.indexPath = userIndex
	r.Head, r.Started, r.PID, r.Agent, r.Command = head, time.Now().UTC(), os.Getpid(), o.Agent, o.Command
	fail := func(err error) error {
		r.remove(context.WithoutCancel(ctx))
		return err
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "objects"), 0o700); err != nil {
		return fail(fmt.Errorf("make the run's folder: %w", err))
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "hooks"), 0o700); err != nil {
		return fail(err)
	}
	// The user's tree as they see it: their index copied (its stat
	// facts spare hashing unchanged files), then every change added.
	// It is recorded while git checks HEAD out into the worktree: the
	// two write nothing the other reads (the record goes to the run's
	// own index and objects).
	if err := copyFile(userIndex, r.userIndex()); err != nil {
		return fail(err)
	}
	baseErr := make(chan error, 1)
	go func() {
		base, err := r.snapshot(ctx, root, r.userIndex())
		r.Base = base
		baseErr <- err
	}()
	// The worktree: HEAD checked out, hooks off (no post-checkout
	// script of the repository runs behind the user's back).
	// core.longpaths: Git for Windows writes paths past 260 characters
	// (the cache folder adds some 70); elsewhere it changes nothing.
	_, addErr := (gitrepo.Cmd{Root: root, Timeout: SetupTimeout}).Run(ctx, "-c", "core.hooksPath="+filepath.Join(r.dir, "hooks"), "-c", "core.longpaths=true",
		"worktree", "add", "--detach", "--quiet", r.Worktree, head)
	if err := <-baseErr; err != nil {
		return fail(fmt.Errorf("record your tree: %w", err))
	}
	os.Remove(r.userIndex()) // later looks at the user's files ask only of the paths they need
	if addErr != nil {
		return fail(fmt.Errorf("make the worktree: %w", addErr))
	}
	// Then what the user has beyond HEAD, through a private index (the
	// worktree's own index stays HEAD's, so git status there shows the
	// user's changes as changes, as in their tree).
	if err := r.copyIndex(ctx, r.Worktree, r.runIndex()); err != nil {
		return fail(err)
	}
	// The copy is dated a second ahead: git trusts the stat facts of a
	// file only when it is older than its index (git's racy-git rule,
	// to the second), and the checkout wrote every file in the index's
	// second, so git would read every file again, twice, here. Nothing
	// has written the worktree since git did: its facts are true. (The
	// index read-tree writes is dated as git dates it.)
	ahead := time.Now().Add(time.Second)
	os.Chtimes(r.runIndex(), ahead, ahead)
	// One tree read over the worktree's index (-m keeps the stat facts
	// of the files it leaves alone, -u writes the others): the index
	// comes out whole, its tree cache filled, so the run's first
	// snapshot hashes and writes only what the run changed.
	if _, err := r.git(ctx, r.Worktree, r.runIndex(), "read-tree", "-m", "-u", r.Base); err != nil {
		return fail(fmt.Errorf("bring your changes into the worktree: %w", err))
	}
	if err := r.bringIgnored(ctx, o); err != nil {
		return fail(err)
	}
	r.State = Pending
	if err := r.save(); err != nil {
		r.State = ""
		return fail(err)
	}
	return nil
}

// copyIndex copies the index of the worktree dir to dst (none: dst is
// left absent and git starts an empty one). The worktree's ".git" file
// names its folder in the repository ("gitdir: ..."), which holds the
// index; where it does not, git is asked.
func (r *Run) copyIndex(ctx context.Context, dir, dst string) error {
	if b, err := safeio.ReadRegular(filepath.Join(dir, ".git"), 64<<10); err == nil {
		if gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok && !strings.ContainsAny(gd, "\n\r") {
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(dir, gd)
			}
			return copyFile(filepath.Join(gd, "index"), dst)
		}
	}
	p, err := gitrepo.Run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return err
	}
	return copyFile(strings.TrimSpace(p), dst)
}

// copyFile copies an index file (absent: nothing to copy).
func copyFile(from, dst string) error {
	src, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// bringIgnored copies (or links) the ignored paths the user's config
// lists into the worktree. A path that is not there is skipped; one that
// leaves the root, or is reached through a link, is refused.
func (r *Run) bringIgnored(ctx context.Context, o Options) error {
	for _, list := range []struct {
		paths []string
		link  bool
	}{{o.Copy, false}, {o.Link, true}} {
		for _, p := range list.paths {
			rel, err := cleanRel(p)
			if err != nil {
				return fmt.Errorf("your config's worktree path %q: %w", p, err)
			}
			src := filepath.Join(r.Root, filepath.FromSlash(rel))
			if linkedParent(r.Root, rel) {
				return fmt.Errorf("your config's worktree path %q is reached through a symbolic link: not copied", p)
			}
			fi, err := os.Lstat(src)
			if err != nil {
				continue // not in this tree
			}
			dst := filepath.Join(r.Worktree, filepath.FromSlash(rel))
			if _, err := os.Lstat(dst); err == nil {
				continue // the tree has it already (tracked or untracked)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if list.link {
				if err := os.Symlink(src, dst); err != nil {
					return fmt.Errorf("link %s into the worktree: %w", rel, err)
				}
				r.Linked = append(r.Linked, rel)
				continue
			}
			if err := copyTree(src, dst, fi); err != nil {
				return fmt.Errorf("copy %s into the worktree: %w", rel, err)
			}
			r.Copied = append(r.Copied, rel)
		}
	}
	return nil
}

// cleanRel checks a path relative to the root: no absolute path, no "..".
func cleanRel(p string) (string, error) {
	p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if p == "." || p == "" || filepath.IsAbs(filepath.FromSlash(p)) || strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") || filepath.VolumeName(filepath.FromSlash(p)) != "" {
		return "", errors.New("not a path inside the repository")
	}
	return p, nil
}

// linkedParent reports whether a folder on the way to rel under root is a
// symbolic link (or not a folder).
func linkedParent(root, rel string) bool {
	parts := strings.Split(rel, "/")
	dir := root
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err != nil {
			return false // absent: nothing is reached through it
		}
		if !fi.IsDir() {
			return true
		}
	}
	return false
}

// copyTree copies a regular file, a folder (recursively) or a link (as a
// link) from src to dst; other kinds are skipped.
func copyTree(src, dst string, fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	case fi.IsDir():
		if err := os.Mkdir(dst, fi.Mode().Perm()|0o700); err != nil {
			return err
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			cfi, err := e.Info()
			if err != nil {
				continue
			}
			if err := copyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), cfi); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode().IsRegular():
		in, err := safeio.OpenOwned(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil
}

// save writes the record atomically (a temporary file renamed over it).
func (r *Run) save() error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(r.dir, "run-*.json.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(r.dir, "run.json"))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("record the run: %w", err)
	}
	return nil
}

// Load reads the run id of the work tree root.
func Load(root, id string) (*Run, error) {
	repoDir, err := RepoDir(root)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(id, `/\`) || id == "" || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("no run %q", id)
	}
	return loadDir(recordDir(repoDir, id))
}

func loadDir(dir string) (*Run, error) {
	b, err := safeio.ReadRegular(filepath.Join(dir, "run.json"), 4<<20)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	r.dir = dir
	return &r, nil
}

// List returns the runs of the work tree root, oldest first: pending ones
// and applied ones that Undo can still take out.
func List(root string) ([]*Run, error) {
	repoDir, err := RepoDir(root)
	if err != nil {
		return nil, err
	}
	names, err := os.ReadDir(repoDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sweep(repoDir)
	var out []*Run
	for _, n := range names {
		if !n.IsDir() || !strings.HasSuffix(n.Name(), ".run") {
			continue
		}
		r, err := loadDir(filepath.Join(repoDir, n.Name()))
		if err != nil {
			continue // a run whose set-up died before its record: removed by Prune
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// Latest is the newest run of root in state ("" any), or nil.
func Latest(root, state string) *Run {
	list, _ := List(root)
	for i := len(list) - 1; i >= 0; i-- {
		if state == "" || list[i].State == state {
			return list[i]
		}
	}
	return nil
}

// Discard removes a pending run: its worktree (git worktree remove
// --force, then prune: nothing is left in git worktree list) and its
// record. Nothing of the user's tree is touched. A run an executor holds
// (Hold) is not discarded (BusyError).
func (r *Run) Discard(ctx context.Context) error {
	release, err := r.holdFor("discard")
	if err != nil {
		return err
	}
	release() // before the record's folder, the lock's, goes
	return r.remove(ctx)
}

// remove takes away the worktree (if any) and the record.
func (r *Run) remove(ctx context.Context) error {
	var first error
	if r.Worktree != "" {
		if err := r.dropWorktree(ctx); err != nil {
			first = err
		}
	}
	if err := os.RemoveAll(r.dir); err != nil && first == nil {
		first = err
	}
	return first
}

// dropWorktree takes the worktree away: its folder is renamed aside
// (<id>.trash), git's record of it removed (nothing is left in git
// worktree list), and the folder removed in the background; a removal
// cut short (the process ended) is finished by the next Reserve or List.
// The folder is relay-baton's own, in the cache folder.
func (r *Run) dropWorktree(ctx context.Context) error {
	r.Unwatch()
	admin := r.adminDir(ctx)
	trash := r.Worktree + ".trash"
	if err := os.Rename(r.Worktree, trash); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// git's record of the worktree is its folder in the repository's
	// worktrees/ (git-worktree(1), DETAILS): removed as git worktree
	// prune removes that of a worktree whose folder is gone, with the
	// worktrees/ folder when it is left empty. Where it cannot be told
	// (an older layout), git prunes.
	if admin != "" {
		if err := os.RemoveAll(admin); err != nil {
			return err
		}
		os.Remove(filepath.Dir(admin))
	} else if _, err := gitrepo.Run(ctx, r.Root, "worktree", "prune"); err != nil {
		return err
	}
	removals.Add(1)
	go func() {
		defer removals.Done()
		os.RemoveAll(trash)
	}()
	return nil
}

// adminDir is git's folder for the run's worktree: the one its ".git"
// file names ("gitdir: <common dir>/worktrees/<name>"), when that folder
// is in the repository's common folder and names the worktree back (its
// "gitdir" file holds the worktree's .git path); "" otherwise.
func (r *Run) adminDir(ctx context.Context) string {
	dotGit := filepath.Join(r.Worktree, ".git")
	b, err := safeio.ReadRegular(dotGit, 64<<10)
	if err != nil {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || strings.ContainsAny(gd, "\n\r") || !filepath.IsAbs(gd) || filepath.Base(filepath.Dir(gd)) != "worktrees" {
		return ""
	}
	back, err := safeio.ReadRegular(filepath.Join(gd, "gitdir"), 64<<10)
	if err != nil || !sameFile(strings.TrimSpace(string(back)), dotGit) {
		return ""
	}
	if objs, err := r.repoObjects(ctx); err != nil || !sameFile(filepath.Dir(filepath.Dir(gd)), filepath.Dir(objs)) {
		return ""
	}
	return gd
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	return err == nil && os.SameFile(fa, fb)
}

// removals counts the worktree removals and the monitors' closes (see
// monitor.let) running in the background.
var removals sync.WaitGroup

// WaitRemovals waits for the worktree removals and the monitors' closes
// running in the background to end (a process about to exit, tests).
func WaitRemovals() { removals.Wait() }

// sweep removes worktree folders left aside by a removal cut short.
func sweep(repoDir string) {
	names, _ := os.ReadDir(repoDir)
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".trash") {
			os.RemoveAll(filepath.Join(repoDir, n.Name()))
		}
	}
}
