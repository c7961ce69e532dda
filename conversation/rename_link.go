//go:build unix

package conversation

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// renameLink renames old to new without ever replacing new, on any Unix
// file system with hard links: link(2) fails with EEXIST when new exists,
// then old is removed. A crash between the two leaves both names for the
// same file, never none; the next renameLink of old sees new is that file
// and finishes the move (reporting fs.ErrNotExist, as a rename that lost
// the race does). A file system without hard links falls back to a check
// then rename(2), which a concurrent creator of new can race; so does
// anything but a regular file (link(2) may follow a symlink on some
// systems, and a link must move as the link it is).
func renameLink(oldpath, newpath string) error {
	fi, err := os.Lstat(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return checkRename(oldpath, newpath)
	}
	err = os.Link(oldpath, newpath)
	switch {
	case err == nil:
		if err := os.Remove(oldpath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		oi, err1 := os.Lstat(oldpath)
		ni, err2 := os.Lstat(newpath)
		if err1 == nil && err2 == nil && os.SameFile(oi, ni) {
			os.Remove(oldpath)
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrNotExist}
		}
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.EXDEV), errors.Is(err, syscall.EMLINK):
		return checkRename(oldpath, newpath)
	}
	return err
}

// checkRename renames old to new unless new exists.
func checkRename(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}
