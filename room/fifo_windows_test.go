package room

import (
	"os"
	"testing"
	"time"
)

// makeFIFO: Windows has no named pipes in the file system; a test of what
// relay-baton does with one has nothing to test there.
func makeFIFO(t testing.TB, p string) {
	t.Helper()
	t.Skip("no FIFOs in the Windows file system")
}

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
