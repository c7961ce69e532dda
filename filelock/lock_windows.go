package filelock

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// RenameNoReplace renames old to new with MoveFileEx without
// MOVEFILE_REPLACE_EXISTING: it fails when new exists.
func RenameNoReplace(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return err
	}
	err = windows.MoveFileEx(from, to, 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_ALREADY_EXISTS), errors.Is(err, windows.ERROR_FILE_EXISTS):
		err = fs.ErrExist
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		err = fs.ErrNotExist
	}
	return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
}

// lockRange locks the whole file (LockFileEx over the largest range).
func lockRange(f *os.File, flags uint32) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, ^uint32(0), ^uint32(0), ol)
}

// Try takes an exclusive, non-blocking lock on f (LockFileEx).
func Try(f *os.File) (bool, error) {
	err := lockRange(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return err == nil, err
}

// Wait takes an exclusive lock on f, waiting for it.
func Wait(f *os.File) error { return lockRange(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// Held reports whether another handle holds an exclusive lock on the
// file at path: a shared, non-blocking lock is refused only then.
func Held(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = lockRange(f, windows.LOCKFILE_FAIL_IMMEDIATELY)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}

// Unlock releases the lock Try or Wait took on f (closing f releases it
// too).
func Unlock(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, ^uint32(0), ^uint32(0), ol)
}
