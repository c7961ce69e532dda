//go:build unix

package events

import (
	"os"
	"syscall"
)

// lockFile takes an advisory exclusive lock on f, held by every relay-baton
// writer while it checks the file's last byte and appends, so that the
// check sees whole lines. Readers never lock.
func lockFile(f *os.File) (unlock func()) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == nil {
			return func() { syscall.Flock(fd, syscall.LOCK_UN) }
		}
		if err != syscall.EINTR {
			return func() {} // no locking here (e.g. some network file systems): O_APPEND still keeps lines whole
		}
	}
}

// openFlags are added to every open: never block on a FIFO put where the
// log should be, and (for writing) never follow a symlink.
const (
	openNonBlock  = syscall.O_NONBLOCK
	openNoFollow  = syscall.O_NOFOLLOW
	openDirectory = syscall.O_DIRECTORY // open(2) fails at once on a non-folder
)
