//go:build unix

package filelock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// renameLink renames old to new without ever replacing new, on any Unix
// file system with hard links: link(2) fails with EEXIST when new exists,
// then old is removed. Between the two, old still exists: so that no other
// renamer moves it meanwhile (to another name, as a claim of a message
// whose id is taken does), every renameLink holds an flock on old's folder
// from its check of old to the removal. A crash between link and unlink
// leaves both names for the same file, never none; the next renameLink of
// old to new sees new is that file and finishes the move (reporting
// fs.ErrNotExist, as a rename that lost the race does). A file system without hard links falls back to a check
// then rename(2), which a concurrent creator of new can race; so does
// anything but a regular file (link(2) may follow a symlink on some
// systems, and a link must move as the link it is).
func renameLink(oldpath, newpath string) error {
	if unlock, err := lockDir(filepath.Dir(oldpath)); err == nil {
		defer unlock()
	}
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

// lockDir takes an exclusive flock on folder dir (flock works on a
// folder's descriptor on Linux, macOS and the BSDs).
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := Wait(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
