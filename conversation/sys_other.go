//go:build !linux

package conversation

import (
	"errors"
	"io/fs"
	"os"
)

const syscallNoFollow = 0

// renameNoReplace is a best effort off Linux: check, then rename.
func renameNoReplace(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}

func tryLock(f *os.File) (bool, error) {
	return false, errors.New("the waiter lock needs Linux")
}

const openNonBlock = 0

const openDirectory = 0

func lockWait(f *os.File) error { return errors.New("claim markers need Linux") }

func processAlive(pid int) bool { return true }
