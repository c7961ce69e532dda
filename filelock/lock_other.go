//go:build !unix && !windows

package filelock

import (
	"errors"
	"io/fs"
	"os"
)

// Neither Unix nor Windows (plan9, js/wasm, wasip1): relay-baton does not
// support these systems; the package builds, and the lane's locks refuse.

func RenameNoReplace(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}

var errNoLocks = errors.New("file locks are not available on this system: use Linux, macOS or Windows")

func Try(f *os.File) (bool, error) { return false, errNoLocks }

func Held(string) (bool, error) { return false, errNoLocks }

func Wait(f *os.File) error { return errNoLocks }

func Unlock(f *os.File) error { return errNoLocks }
