//go:build !unix && !windows

package procfacts

import "os/exec"

// OwnGroup does nothing here: cancelling cmd kills its process only.
func OwnGroup(cmd *exec.Cmd) {}

// KillGroup kills cmd's process.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
