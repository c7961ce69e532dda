//go:build !linux || portable

package runs

import "errors"

// monitor: none here. macOS's kqueue reports a change to a folder's
// entries but not a write to a file in it (each file would need a
// descriptor of its own), and Windows is not watched (the portable build
// tests this path on Linux): every look at a run's worktree reads it.
type monitor struct{}

func startMonitor(string) (*monitor, error) {
	return nil, errors.New("no file-system monitor on this system")
}

func (*monitor) quiet() bool { return false }
func (*monitor) close()      {}
