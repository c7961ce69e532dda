package agenttest

import (
	"os"
	"os/exec"
	"testing"
)

// TmuxBin is tmux's path, for the tests that drive a TUI in a tmux pane:
// without tmux they are skipped, and fail on CI (which installs it).
func TmuxBin(t testing.TB) string {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	return tmux
}
