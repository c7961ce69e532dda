//go:build !linux

package room

import "golang.org/x/sys/unix"

// tcflush discards the terminal's unread input (tcflush(fd, TCIFLUSH)).
func tcflush(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) } // FREAD
