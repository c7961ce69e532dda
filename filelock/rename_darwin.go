//go:build darwin && !portable

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames old to new, failing with fs.ErrExist when new
// exists (renamex_np RENAME_EXCL, macOS 10.12 and later), so a claim never
// overwrites the record of another message. Filesystems without the flag
// take the portable way (renameLink).
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.RenamexNp(oldpath, newpath, unix.RENAME_EXCL)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameLink(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
