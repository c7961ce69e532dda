//go:build !unix && !windows

package conversation

import (
	"errors"
	"io/fs"
	"os"
)

// Neither Unix nor Windows (plan9, js/wasm, wasip1): relay-baton does not
// support these systems; the package builds, and the lane's locks refuse.

func renameNoReplace(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}

var errNoLocks = errors.New("file locks are not available on this system: use Linux, macOS or Windows")

func tryLock(f *os.File) (bool, error) { return false, errNoLocks }

func lockHeld(string) (bool, error) { return false, errNoLocks }

const openNonBlock = 0

const openDirectory = 0

func lockWait(f *os.File) error { return errNoLocks }
