//go:build unix

package procfacts

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own, which cancelling its
// context ends whole (SIGKILL to the group).
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { KillGroup(cmd); return nil }
}

// KillGroup ends cmd's process group (started by OwnGroup).
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
