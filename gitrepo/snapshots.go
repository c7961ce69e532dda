package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Snapshots records trees of the working tree (tracked and untracked files
// git does not ignore, .ai-session and the chat folder excluded) without
// touching the repository: a private index and object folder, with the
// repository's objects as an alternate, so the diff since a step began is
// exact even over earlier uncommitted changes.
type Snapshots struct {
	root string
	dir  string // "" when the temporary folder could not be made
	env  []string
	err  error
}

// NewSnapshots makes a store for the work tree root. Its errors are kept:
// Tree reports them.
func NewSnapshots(ctx context.Context, root string) *Snapshots {
	s := &Snapshots{root: root}
	objs, err := Run(ctx, root, "rev-parse", "--git-path", "objects")
	if err != nil {
		s.err = err
		return s
	}
	objs = strings.TrimSpace(objs)
	if !filepath.IsAbs(objs) {
		objs = filepath.Join(root, objs)
	}
	// Folders of runs killed before they could remove theirs go first.
	staleOnce.Do(func() { RemoveStaleSteps("") })
	dir, err := os.MkdirTemp("", stepDirPattern())
	if err != nil {
		s.err = err
		return s
	}
	if err := os.Mkdir(filepath.Join(dir, "objects"), 0o700); err != nil {
		os.RemoveAll(dir)
		s.err = err
		return s
	}
	s.dir = dir
	s.env = []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index"), "GIT_OBJECT_DIRECTORY=" + filepath.Join(dir, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objs}
	return s
}

// Ready reports whether the store's folder was made (if not, Tree says
// why).
func (s *Snapshots) Ready() bool { return s.dir != "" }

// Close removes the store.
func (s *Snapshots) Close() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// SnapshotTimeout bounds one git command of a snapshot store: adding a
// large work tree to the store's index takes longer than a query.
const SnapshotTimeout = 60 * time.Second

// Run runs git in the store's work tree with the store's index and
// objects.
func (s *Snapshots) Run(ctx context.Context, args ...string) (string, error) {
	return Cmd{Root: s.root, Env: s.env, Timeout: SnapshotTimeout}.Run(ctx, args...)
}

// Tree records the working tree now and returns its tree id.
func (s *Snapshots) Tree(ctx context.Context) (string, error) {
	if s.dir == "" {
		return "", fmt.Errorf("no snapshot folder: %w", s.err)
	}
	if _, err := s.Run(ctx, "add", "-A", "--", ".", excludeSession, excludeChat); err != nil {
		return "", err
	}
	id, err := s.Run(ctx, "write-tree")
	return strings.TrimSpace(id), err
}

// Since returns the paths changed (name-status lines) and the diff from
// tree start to the working tree now.
func (s *Snapshots) Since(ctx context.Context, start string) (names, diff string, err error) {
	now, err := s.Tree(ctx)
	if err != nil {
		return "", "", err
	}
	if names, err = s.Run(ctx, "diff", "--name-status", "--no-renames", start, now); err != nil {
		return "", "", err
	}
	names = strings.ReplaceAll(names, "\t", " ")
	diff, err = s.Run(ctx, "diff", "--no-renames", start, now)
	return names, diff, err
}

// FileChange is one path a run changed, between two trees.
type FileChange struct {
	Path    string
	Status  byte // 'A' new, 'D' deleted, 'M' modified, 'T' type changed
	Added   int
	Deleted int
	Binary  bool
}

// Changed lists the paths that differ between two trees of the store,
// with line counts.
func (s *Snapshots) Changed(ctx context.Context, from, to string) ([]FileChange, error) {
	ns, err := s.Run(ctx, "diff", "--name-status", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	var files []FileChange
	idx := map[string]int{}
	f := strings.Split(ns, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		if f[i] == "" {
			break
		}
		idx[f[i+1]] = len(files)
		files = append(files, FileChange{Path: f[i+1], Status: f[i][0]})
	}
	num, err := s.Run(ctx, "diff", "--numstat", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	EachNumstat(num, func(path string, added, deleted int, binary bool) {
		if i, ok := idx[path]; ok {
			files[i].Added, files[i].Deleted, files[i].Binary = added, deleted, binary
		}
	})
	return files, nil
}

// Counts is "+2 -1", "+5 (new file)", "-3 (deleted)" or "(binary)".
func (f FileChange) Counts() string {
	switch {
	case f.Binary && f.Status == 'A':
		return "(new binary file)"
	case f.Binary && f.Status == 'D':
		return "(binary, deleted)"
	case f.Binary:
		return "(binary)"
	case f.Status == 'A':
		return fmt.Sprintf("+%d (new file)", f.Added)
	case f.Status == 'D':
		return fmt.Sprintf("-%d (deleted)", f.Deleted)
	}
	return fmt.Sprintf("+%d -%d", f.Added, f.Deleted)
}

// Restore writes back the files of tree before that files says changed
// and removes the files it created; the repository's index and commits are not
// touched (the store's own index is used).
func (s *Snapshots) Restore(ctx context.Context, before string, files []FileChange) error {
	root := s.root
	var back []string
	for _, f := range files {
		if f.Status == 'A' {
			p := filepath.Join(root, filepath.FromSlash(f.Path))
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			removeEmptyParents(root, filepath.Dir(p))
			continue
		}
		back = append(back, f.Path)
	}
	if len(back) == 0 {
		return nil
	}
	if _, err := s.Run(ctx, "read-tree", before); err != nil {
		return err
	}
	// checkout-index replaces each path (a link in its place is removed,
	// not followed) from the store's index, here before.
	_, err := s.Run(ctx, append([]string{"checkout-index", "-f", "-q", "--"}, back...)...)
	return err
}

// removeEmptyParents removes dir and its parents up to root while they are
// empty (folders a run made for the files /undo deleted).
func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Ignored lists what git ignores in the work tree root now: files, and
// folders whole ("node_modules/"), without walking into them. A run in
// place that un-ignores one of them (.env taken out of .gitignore) makes
// it look new; /undo uses this list, taken before the run, to never
// delete it.
func Ignored(ctx context.Context, root string) ([]string, error) {
	out, err := Cmd{Root: root, Timeout: SnapshotTimeout}.Run(ctx, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return nil, err
	}
	var list []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	return list, nil
}

// Covers reports whether path is one of list or under one of its
// folders (entries ending in "/").
func Covers(list []string, path string) bool {
	for _, p := range list {
		if p == path || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
