//go:build unix

package conversation

import (
	"errors"
	"os"
	"syscall"
)

// The Unix facts every Unix shares (Linux, macOS, the BSDs): flock(2) for
// claim markers and the waiter lock, O_NONBLOCK and
// O_DIRECTORY. What differs per system (the no-replace rename) is in
// rename_*.go; process facts are procfacts'.

// tryLock takes an exclusive, non-blocking flock on f.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// lockHeld reports whether another open file holds an exclusive flock on
// the file at path: a shared, non-blocking flock is refused only then, and
// is dropped at once when granted.
func lockHeld(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// openNonBlock keeps open(2) from blocking on a FIFO (or a device) put
// where a regular file is expected; regular files ignore it.
const openNonBlock = syscall.O_NONBLOCK

// openDirectory makes open(2) fail at once on anything but a folder.
const openDirectory = syscall.O_DIRECTORY

// lockWait takes an exclusive flock on f, waiting for it.
func lockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
