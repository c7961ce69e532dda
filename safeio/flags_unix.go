//go:build unix

package safeio

import "syscall"

// The flags added to an open: never block on a FIFO put where a file
// should be, never follow a symlink where the file is relay-baton's own,
// and fail at once on a non-folder where a folder is listed.
const (
	ONonBlock  = syscall.O_NONBLOCK
	ONoFollow  = syscall.O_NOFOLLOW
	ODirectory = syscall.O_DIRECTORY
)
