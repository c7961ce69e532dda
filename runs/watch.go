package runs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The room's watch over a pending run (Watch): after the executor ends,
// the room prints the run's change summary (Changes) and the user reads
// it before /apply. Two looks of that summary are kept for the apply:
//
//   - the worktree's tree, while a file-system monitor set before the
//     summary's read reports no change in the worktree since (Linux: an
//     inotify watch on every folder): the apply does not read the whole
//     worktree again. Any change, an overflow of the monitor's queue, a
//     folder it could not watch, or no monitor at all (other systems,
//     the portable build) and the worktree is read as before.
//   - the user's files at the run's paths: each one's settled stat and
//     blob (a file whose stat is unchanged is not hashed again, see
//     statAt), and whether the user's index tracks it, with the index
//     file's stat (a file tracked is never ignored, so while the index
//     file is unchanged its ignore rules need not be asked again; an
//     untracked file's are asked at every apply: a .gitignore edited
//     since counts).

// watch is the room's watch over the worktree: its monitor (nil: none)
// and the tree read since the monitor was set ("" not yet).
type watch struct {
	mon  *monitor
	tree string
}

// look is a look at the user's files: each path's settled stat and
// blob, the paths the user's index tracked, and the index file's settled
// stat then.
type look struct {
	files   map[string]seen
	tracked map[string]bool
	index   fileStat
}

// Watch starts the room's watch over the pending run's worktree (again:
// a watch set earlier is let go first), before the change summary reads
// it: later reads skip the worktree while nothing has changed in it, and
// the summary (Changes) looks at the user's files at the run's paths for
// the apply. It returns why there is no monitor (the reads then read the
// worktree every time, as without a watch). Unwatch, an apply, a discard
// and an undo let it go.
func (r *Run) Watch() error {
	r.Unwatch()
	if r.State != Pending {
		return ErrNotPending
	}
	m, err := startMonitor(r.Worktree)
	r.watchMu.Lock()
	r.watch = &watch{mon: m}
	r.watchMu.Unlock()
	return err
}

// Unwatch lets the watch go (its monitor's watches and descriptor); the
// room calls it before an executor writes the worktree again and when it
// lets the run go.
func (r *Run) Unwatch() {
	r.watchMu.Lock()
	w := r.watch
	r.watch, r.look = nil, nil
	r.watchMu.Unlock()
	if w != nil && w.mon != nil {
		w.mon.let()
	}
}

// Watched reports whether the monitor of the room's watch is set and
// has reported no change in the worktree.
func (r *Run) Watched() bool {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	return r.watch != nil && r.watch.mon != nil && r.watch.mon.quiet()
}

// watchedTree is the worktree's tree when the watch's monitor says
// nothing changed since it was read; "" otherwise (a monitor that
// reported a change is let go: from then on the worktree is read).
func (r *Run) watchedTree() string {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	w := r.watch
	if w == nil || w.mon == nil {
		return ""
	}
	if !w.mon.quiet() {
		w.mon.let()
		w.mon, w.tree = nil, ""
		return ""
	}
	return w.tree
}

// watchRead keeps tree, read while the monitor was set, as the watch's.
// An event reported since (during the read included) is still queued:
// the next look finds the monitor not quiet.
func (r *Run) watchRead(tree string) {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if w := r.watch; w != nil && w.mon != nil && w.tree == "" {
		w.tree = tree
	}
}

// lookAhead looks at the user's files at paths for a coming apply (a
// watched run's summary): each regular file hashed (git hash-object -w,
// into the run's objects) and asked of the user's index (git ls-files),
// the two at once, the index file's stat taken first.
func (r *Run) lookAhead(ctx context.Context, paths []string) error {
	if r.indexPath == "" {
		p, err := r.gitIn(ctx, r.Root, "", nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
		if err != nil {
			return err
		}
		r.indexPath = strings.TrimSpace(p)
	}
	at := time.Now()
	l := &look{files: map[string]seen{}, tracked: map[string]bool{}}
	if fi, err := os.Lstat(r.indexPath); err == nil {
		l.index = statAt(fi, at, r.fine())
	}
	var files []string
	stats := map[string]fileStat{}
	for _, p := range paths {
		if linkedParent(r.Root, p) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if st := statAt(fi, at, r.fine()); st.ok {
			files = append(files, p)
			stats[p] = st
		}
	}
	if len(files) > 0 {
		trackedErr := make(chan error, 1)
		go func() {
			t, err := r.trackedOf(ctx, files)
			for _, p := range t {
				l.tracked[p] = true
			}
			trackedErr <- err
		}()
		ids, err := r.hashFiles(ctx, files)
		if terr := <-trackedErr; err == nil {
			err = terr
		}
		if err != nil {
			return err
		}
		for i, p := range files {
			l.files[p] = seen{stats[p], ids[i]}
		}
	}
	r.watchMu.Lock()
	if r.watch != nil {
		r.look = l
	}
	r.watchMu.Unlock()
	return nil
}

// prior is the summary's look at the user's files (nil: none).
func (r *Run) prior() *look {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	return r.look
}

// indexSame reports whether the user's index file is the one l saw (and
// was settled then): what it tracks is what it tracked.
func (r *Run) indexSame(l *look) bool {
	if l == nil || !l.index.ok || r.indexPath == "" {
		return false
	}
	fi, err := os.Lstat(r.indexPath)
	return err == nil && sysStat(fi) == l.index
}

// trackedOf lists the paths among paths the user's index tracks.
func (r *Run) trackedOf(ctx context.Context, paths []string) ([]string, error) {
	var out []string
	for len(paths) > 0 { // in batches: a command line has a bound
		n := min(len(paths), maxArgPaths)
		ls, err := r.gitIn(ctx, r.Root, "", nil, append([]string{"ls-files", "-z", "--"}, paths[:n]...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range strings.Split(ls, "\x00") {
			if p != "" {
				out = append(out, p)
			}
		}
		paths = paths[n:]
	}
	return out, nil
}

// wantsLook reports whether the room watches the run and its look at
// the user's files is still to be made.
func (r *Run) wantsLook() bool {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	return r.watch != nil && r.look == nil
}

// let closes the monitor in the background (WaitRemovals waits for it):
// the kernel takes a while to let a folder's watch go (milliseconds
// each under load), and nothing waits on it.
func (m *monitor) let() {
	removals.Add(1)
	go func() {
		defer removals.Done()
		m.close()
	}()
}
