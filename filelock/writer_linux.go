//go:build linux && !portable

package filelock

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// WriterHeld reports whether some process holds an flock on the file at
// path (fi is its Lstat): it reads /proc/locks for the file's inode and
// never takes the lock itself; without /proc/locks it probes (Held).
func WriterHeld(path string, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	locks, err := os.ReadFile("/proc/locks")
	if !ok || err != nil {
		held, _ := Held(path)
		return held
	}
	suffix := fmt.Sprintf(":%d ", st.Ino)
	for _, l := range strings.Split(string(locks), "\n") {
		// "1: FLOCK  ADVISORY  WRITE 1739 fe:00:9994199 0 EOF"
		f := strings.Fields(l)
		if len(f) >= 6 && f[1] == "FLOCK" && strings.HasSuffix(f[5]+" ", suffix) {
			return true
		}
	}
	return false
}

// WriterPID is the process that holds a flock on the file at path (fi is
// its Lstat), from /proc/locks; 0 when none does or it cannot be told.
func WriterPID(fi fs.FileInfo) int {
	st, ok := fi.Sys().(*syscall.Stat_t)
	locks, err := os.ReadFile("/proc/locks")
	if !ok || err != nil {
		return 0
	}
	suffix := fmt.Sprintf(":%d ", st.Ino)
	for _, l := range strings.Split(string(locks), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && f[1] == "FLOCK" && strings.HasSuffix(f[5]+" ", suffix) {
			if pid, err := strconv.Atoi(f[4]); err == nil {
				return pid
			}
		}
	}
	return 0
}
