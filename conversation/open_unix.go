//go:build unix

package conversation

import "syscall"

// openNonBlock keeps open(2) from blocking on a FIFO (or a device) put
// where a regular file is expected; regular files ignore it.
const openNonBlock = syscall.O_NONBLOCK
