//go:build !linux || portable

package conversation

import "io/fs"

// writerLockHeld probes the lock (lockHeld): a shared, non-blocking lock is
// refused while codex holds its exclusive one, and is dropped at once.
func writerLockHeld(path string, _ fs.FileInfo) bool {
	held, _ := lockHeld(path)
	return held
}
