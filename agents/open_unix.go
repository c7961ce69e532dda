//go:build unix

package agents

import "syscall"

// openNoFollow: open(2) never follows a symlink at the last component, and
// never blocks on a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
