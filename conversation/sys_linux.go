package conversation

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// renameNoReplace renames old to new, failing with fs.ErrExist when new
// exists (renameat2 RENAME_NOREPLACE), so a claim never overwrites the
// record of another message. Filesystems without the flag fall back to a
// plain rename.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return os.Rename(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// tryLock takes an exclusive, non-blocking flock on f.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
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

// processAlive reports whether process pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
