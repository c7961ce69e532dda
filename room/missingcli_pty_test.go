//go:build unix

package room

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// With claude and codex missing, the room's first screen says so, with the
// npm package to install and the variable that names a binary, before any
// prompt (not after a whole preview).
func TestPTYFirstScreenNamesMissingCLIs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	if err := os.Symlink(git, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	dir := newRepo(t)
	p := startBinary(t, dir, "PATH="+bin, "NO_COLOR=1", "RELAY_BATON_CLAUDE=", "RELAY_BATON_CODEX=")
	p.until(t, "Agent Room")
	p.until(t, "the active agent: claude is not installed: no `claude` on PATH (install it with `npm install -g @anthropic-ai/claude-code` and log in once, or set")
	p.until(t, "RELAY_BATON_CLAUDE to its path)")
	p.until(t, "codex is not installed: no `codex` on PATH (install it with `npm install -g @openai/codex` and log in once, or set RELAY_BATON_CODEX to its path)")
	p.until(t, "claude› ")
	if s := p.String(); strings.Count(s, "is not installed") != 2 {
		t.Fatalf("screen:\n%s", s)
	}
	p.send(t, "\x04")
	p.wait(t)
}
