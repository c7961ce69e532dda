//go:build unix

package repl

import (
	"os"
	"syscall"
)

// interruptSelf sends this process the SIGINT a terminal's ^C would.
func interruptSelf() { syscall.Kill(os.Getpid(), syscall.SIGINT) }
