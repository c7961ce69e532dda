package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/gitrepo"
)

// The look at the user's files at the run's paths, without a walk of
// their tree: what an apply or an undo would write over.

// maxArgPaths is the most paths one git command line carries.
const maxArgPaths = 100

// userFile is the user's copy of a path now: its blob and mode as git
// would record them (tracked, or untracked and not ignored), and whether
// something is on disk there.
type userFile struct {
	blob, mode string // "" when git would not record it (absent, ignored, not a regular file)
	onDisk     bool
	kind       string   // what is on disk when it is not a regular file
	linked     bool     // a folder on the way is a link or a file
	ignored    bool     // an untracked file git ignores
	diskBlob   string   // the blob of the file on disk, ignored or not
	stat       fileStat // the regular file's stat when it was hashed (ok: settled, see statAt)
}

// seen is what an earlier look found at a path: a file whose stat is
// still the settled one it had then holds the same blob (it is not read
// again).
type seen struct {
	stat fileStat
	blob string
}

// userFiles looks at the user's files at paths, without a walk of their
// tree: each path is looked at (lstat), the untracked ones git ignores
// are asked of git check-ignore, and the regular files are hashed as git
// would store them (git hash-object -w: their filters applied, stored in
// the run's own objects for a merge), the two at once. What an earlier
// look (prior: the summary's, or the plan's for a recheck) found stands
// where it still holds: a file whose settled stat is unchanged is not
// hashed again, and one the user's index tracked then, the index file
// unchanged, is not ignored (git never ignores a tracked file). At most
// two git commands whatever the size of the tree, none when the earlier
// look holds; without ignores (a recheck, which needs no ignored status:
// a path absent then must be absent now) at most one.
func (r *Run) userFiles(ctx context.Context, paths []string, ignores bool, prior *look) (map[string]userFile, error) {
	out := make(map[string]userFile, len(paths))
	var hash, check []string
	tracked := ignores && r.indexSame(prior)
	at := time.Now()
	for _, p := range paths {
		var u userFile
		u.linked = linkedParent(r.Root, p)
		if fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(p))); err == nil && !u.linked {
			u.onDisk = true
			if fi.Mode().IsRegular() {
				u.mode = "100644"
				if fi.Mode().Perm()&0o111 != 0 {
					u.mode = "100755"
				}
				u.stat = statAt(fi, at, r.fine())
				if k, ok := prior.file(p); ok && k.stat.ok && k.blob != "" && u.stat == k.stat {
					u.blob, u.diskBlob = k.blob, k.blob
				} else {
					hash = append(hash, p)
				}
				if ignores && !(tracked && prior.tracked[p]) {
					check = append(check, p)
				}
			} else {
				u.kind = kindOf(fi)
			}
		}
		out[p] = u
	}
	if len(hash) == 0 && len(check) == 0 {
		return out, nil
	}
	if _, err := r.repoObjects(ctx); err != nil { // asked once, before the two commands run at once
		return nil, err
	}
	var ignored map[string]bool
	ignErr := make(chan error, 1)
	if len(check) > 0 {
		go func() {
			var err error
			ignored, err = r.ignoredOf(ctx, check)
			ignErr <- err
		}()
	} else {
		ignErr <- nil
	}
	lines, err := r.hashFiles(ctx, hash)
	if ierr := <-ignErr; err == nil && ierr != nil {
		err = ierr
	}
	if err != nil {
		return nil, fmt.Errorf("read your tree: %w", err)
	}
	modes := map[string]string{}
	if runtime.GOOS == "windows" && len(hash) > 0 {
		// No executable bit on disk: git keeps the index's mode.
		if modes, err = r.indexModes(ctx, hash); err != nil {
			return nil, err
		}
	}
	for i, p := range hash {
		u := out[p]
		u.blob, u.diskBlob = lines[i], lines[i]
		if m, ok := modes[p]; ok {
			u.mode = m
		}
		out[p] = u
	}
	for p := range ignored {
		if u, ok := out[p]; ok {
			u.ignored, u.mode, u.blob = true, "", ""
			out[p] = u
		}
	}
	return out, nil
}

// file is what the look found at path p.
func (l *look) file(p string) (seen, bool) {
	if l == nil {
		return seen{}, false
	}
	k, ok := l.files[p]
	return k, ok
}

// hashFiles hashes the user's files at paths as git would store them
// (git hash-object -w --stdin-paths: their filters applied, stored in
// the run's objects), one id per path.
func (r *Run) hashFiles(ctx context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	in := strings.Builder{}
	for _, p := range paths {
		in.WriteString(cQuote(p) + "\n")
	}
	ids, err := r.gitIn(ctx, r.Root, in.String(), nil, "hash-object", "-w", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(ids)
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("git hash-object gave %d ids for %d files", len(lines), len(paths))
	}
	return lines, nil
}

// ignoredOf is the set of the untracked files among paths that git
// ignores: git check-ignore --no-index names those its rules match
// without reading the index (a large one costs more than the rules),
// and the few it names are asked of the index (git ls-files): a tracked
// file is not ignored.
func (r *Run) ignoredOf(ctx context.Context, paths []string) (map[string]bool, error) {
	// It takes no literal pathspecs: a path starting with ":" (magic) is
	// given as "./:...".
	var in strings.Builder
	for _, p := range paths {
		if strings.HasPrefix(p, ":") {
			p = "./" + p
		}
		in.WriteString(p + "\x00")
	}
	ign, err := r.gitIn(ctx, r.Root, in.String(), []string{"GIT_LITERAL_PATHSPECS=0"}, "check-ignore", "--no-index", "--stdin", "-z")
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: none is ignored
		return nil, err
	}
	out := map[string]bool{}
	var matched []string
	for _, p := range strings.Split(ign, "\x00") {
		if p != "" {
			p = strings.TrimPrefix(p, "./")
			out[p] = true
			matched = append(matched, p)
		}
	}
	for len(matched) > 0 { // in batches: a command line has a bound
		n := min(len(matched), maxArgPaths)
		tracked, err := r.gitIn(ctx, r.Root, "", nil, append([]string{"ls-files", "-z", "--"}, matched[:n]...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range strings.Split(tracked, "\x00") {
			delete(out, p)
		}
		matched = matched[n:]
	}
	return out, nil
}

// indexModes is the mode of each of paths in the user's index (tracked
// paths only).
func (r *Run) indexModes(ctx context.Context, paths []string) (map[string]string, error) {
	out := map[string]string{}
	for len(paths) > 0 { // in batches: a command line has a bound
		n := min(len(paths), maxArgPaths)
		ls, err := gitrepo.Cmd{Root: r.Root, Env: []string{"GIT_LITERAL_PATHSPECS=1"}, Timeout: SetupTimeout}.Run(ctx, append([]string{"ls-files", "-s", "-z", "--"}, paths[:n]...)...)
		if err != nil {
			return nil, err
		}
		for _, rec := range strings.Split(ls, "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && len(f) >= 3 {
				out[path] = f[0]
			}
		}
		paths = paths[n:]
	}
	return out, nil
}

// cQuote quotes a path as git reads a quoted line (hash-object
// --stdin-paths) when it holds a byte that would end or change the line.
func cQuote(p string) string {
	if !strings.ContainsAny(p, "\"\\\n\r\t") && !strings.ContainsFunc(p, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func kindOf(fi os.FileInfo) string {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return "a symbolic link"
	case fi.IsDir():
		return "a folder"
	}
	return "not a regular file"
}
