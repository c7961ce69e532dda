//go:build linux && !portable

package runs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A monitor is an inotify instance with a watch on every folder of a
// worktree (inotify reports the writes to a folder's files to the
// folder's watch). The kernel queues an event inside the system call
// that made the change, so a non-blocking look at the queue (FIONREAD)
// says exactly whether anything changed in the tree since the watches
// were set; no goroutine reads the events (fsnotify hands them over on
// one, which leaves a write just made unreported for a moment). Not
// reported by the kernel: writes through a shared memory map, and writes
// to a file of the tree through another hard link to it from outside.
type monitor struct {
	mu sync.Mutex
	fd int // -1 once closed
}

// watchMask is every change a tree's record can follow: a file written,
// truncated or closed after a write, its mode or times changed, an entry
// made, removed or renamed, the folder itself removed or moved.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// startMonitor watches every folder under root (links not followed). A
// folder's watch is set before its entries are read, so a folder made
// meanwhile is either read or reported. It fails (no monitor) when the
// tree has more folders than maxWatches allows, or a watch cannot be
// set (the user's inotify watches are spent: fs.inotify.max_user_watches).
func startMonitor(root string) (*monitor, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	m := &monitor{fd: fd}
	limit := maxWatches()
	dirs := []string{root}
	for n := 0; len(dirs) > 0; n++ {
		if n >= limit {
			m.close()
			return nil, errTooManyFolders
		}
		dir := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		if _, err := unix.InotifyAddWatch(fd, dir, watchMask); err != nil {
			m.close()
			return nil, err
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			m.close()
			return nil, err
		}
		for _, e := range ents {
			if e.Type()&os.ModeType == os.ModeDir { // a link to a folder is not followed
				dirs = append(dirs, filepath.Join(dir, e.Name()))
			}
		}
	}
	return m, nil
}

var errTooManyFolders = errors.New("the worktree has more folders than relay-baton watches")

// maxWatches is how many folders a monitor watches at most: an eighth of
// the user's inotify watches (other programs share them), and no more
// than 16,384.
var maxWatches = func() int {
	limit := 8192 // the kernel's default before 5.11
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			limit = n
		}
	}
	return min(limit/8, 16384)
}

// quiet reports whether nothing was reported since the watches were set
// (neither an event nor the queue's overflow is pending).
func (m *monitor) quiet() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fd < 0 {
		return false
	}
	n, err := unix.IoctlGetInt(m.fd, unix.TIOCINQ) // FIONREAD: the bytes of events queued
	return err == nil && n == 0
}

// close lets the watches go (closing the instance removes them all).
func (m *monitor) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fd >= 0 {
		unix.Close(m.fd)
		m.fd = -1
	}
}
