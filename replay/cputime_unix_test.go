//go:build unix

package replay

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time (user+system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
