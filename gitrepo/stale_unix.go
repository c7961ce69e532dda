//go:build unix

package gitrepo

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// processAlive reports whether pid names a live process (one of another
// user counts as live).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
