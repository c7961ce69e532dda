//go:build unix && !linux

package repl

import "golang.org/x/sys/unix"

// tcflush discards the terminal's unread input (tcflush(fd, TCIFLUSH) is
// ioctl TIOCFLUSH with FREAD on macOS and the BSDs).
func tcflush(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) } // FREAD
