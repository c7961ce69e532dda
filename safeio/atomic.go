package safeio

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/filelock"
)

// WriteFileAtomic is relay-baton's one whole-file write: data goes to a
// temporary file beside path (its name starts with ".", so inbox readers
// skip it), gets mode perm, and is renamed over path, so a reader sees the
// old file or the new one, never half of one. The rename replaces a
// symlink at path instead of following it. With durable it also fsyncs
// the file before the rename and the folder after it (litestream's
// FsyncDir), so the new file survives a crash: for what must not be lost
// (a queued chat message, plan.md, a settings file, the trust record).
// Without, the rename is still atomic but a crash may forget it (caches,
// records that can be rebuilt). A failed write (a full disk) leaves the
// old file as it was and no temporary file behind.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode, durable bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if durable {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("%s written, but its folder not synced: %w", path, err)
		}
	}
	return nil
}

// syncDir fsyncs a folder so that a rename within it is durable.
func syncDir(dir string) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|ONonBlock|ODirectory, 0) // a FIFO put there instead does not block
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// LockFile takes an advisory exclusive lock on f (filelock.Wait: flock on
// Unix, LockFileEx on Windows), waiting for it, and returns its release.
// Where the file system has no locks (some network file systems) it holds
// none and its release does nothing: the appends it guards (O_APPEND, one
// write per line) still land whole. Readers never lock.
func LockFile(f *os.File) (unlock func()) {
	if filelock.Wait(f) != nil {
		return func() {}
	}
	return func() { _ = filelock.Unlock(f) }
}
