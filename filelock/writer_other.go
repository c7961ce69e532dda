//go:build !linux || portable

package filelock

import "io/fs"

// WriterHeld reports whether another process holds an exclusive lock on
// the file at path, by probing it (Held): a shared, non-blocking lock is
// refused while codex holds its exclusive one, and is dropped at once.
func WriterHeld(path string, _ fs.FileInfo) bool {
	held, _ := Held(path)
	return held
}
