package events

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on the whole of f (LockFileEx), held by
// every relay-baton writer while it checks the file's last byte and
// appends. Readers never lock.
func lockFile(f *os.File) (unlock func()) {
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	if windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, ^uint32(0), ^uint32(0), ol) != nil {
		return func() {} // no locking here: appends still land whole
	}
	return func() { windows.UnlockFileEx(h, 0, ^uint32(0), ^uint32(0), ol) }
}

// Windows has no O_NONBLOCK, O_NOFOLLOW nor O_DIRECTORY for open:
// OpenChecked checks the path after opening instead.
const (
	openNonBlock  = 0
	openNoFollow  = 0
	openDirectory = 0
)
