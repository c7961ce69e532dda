package subprocess

import "syscall"

// groupAttr puts the child in a process group of its own, and has the
// kernel send it SIGKILL when relay-baton's thread that started it dies.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
