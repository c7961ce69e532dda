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

// WriterPID is the process that holds a lock on a file: not known here (a
// probe says only whether one is held), 0.
func WriterPID(fs.FileInfo) int { return 0 }
