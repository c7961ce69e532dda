//go:build unix && (!linux || portable)

package subprocess

import "syscall"

// groupAttr puts the child in a process group of its own; the guard
// (tree_unix.go) stops the group when relay-baton dies.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
