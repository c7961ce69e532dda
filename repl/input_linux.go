package repl

import "golang.org/x/sys/unix"

// tcflush discards the terminal's unread input (tcflush(fd, TCIFLUSH)).
func tcflush(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
