package room

import (
	"os"
	"time"
)

// cpuTime is unknown here: wall time stands in for it.
func cpuTime() time.Duration { return time.Duration(time.Now().UnixNano()) }

// pidAlive reports whether process pid exists.
func pidAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// interruptSelf: Windows has no SIGINT to send oneself.
func interruptSelf() {}
