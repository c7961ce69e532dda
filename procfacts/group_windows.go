package procfacts

import "os/exec"

// OwnGroup: on Windows cancelling cmd's context kills cmd's process only
// (Go's default): a child it started (codex's npm launcher starts the
// native binary) may outlive it. The lane that runs these commands is not
// supported on native Windows (docs/platforms.md).
func OwnGroup(cmd *exec.Cmd) {}

// KillGroup kills cmd's process.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
