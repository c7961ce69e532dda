//go:build linux && !portable

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames old to new, failing with fs.ErrExist when new
// exists (renameat2 RENAME_NOREPLACE), so a claim never overwrites the
// record of another message. Filesystems without the flag take the
// portable way (renameLink).
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameLink(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
