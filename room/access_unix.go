//go:build unix

package room

import "syscall"

// canWrite asks access(2) whether dir is writable, writing nothing.
func canWrite(dir string) error { return syscall.Access(dir, 0x2) } // W_OK
