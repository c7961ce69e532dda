//go:build unix

package room

import (
	"os"
	"syscall"
	"time"
)

// cpuTime is the process's CPU time (user+system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pidAlive reports whether process pid exists.
func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// interruptSelf sends this process SIGINT, as a terminal's ^C would.
func interruptSelf() { syscall.Kill(os.Getpid(), syscall.SIGINT) }
