//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// Every Unix (Linux, macOS, the BSDs) locks with flock(2). What differs
// per system, the no-replace rename, is in rename_*.go.

// Try takes an exclusive, non-blocking flock on f.
func Try(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Held reports whether another open file holds an exclusive flock on
// the file at path: a shared, non-blocking flock is refused only then, and
// is dropped at once when granted.
func Held(path string) (bool, error) {
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

// Wait takes an exclusive flock on f, waiting for it.
func Wait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Unlock releases the lock Try or Wait took on f (closing f releases it
// too).
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
