package repl

import (
	"os"
	"testing"
)

// TestMain keeps the executor runs' worktrees of this package's tests out
// of the user's cache folder.
func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "repl-worktrees-")
	if err != nil {
		panic(err)
	}
	os.Setenv("RELAY_BATON_WORKTREES", d)
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
