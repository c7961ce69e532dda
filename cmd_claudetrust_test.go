package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// The preview and doctor say whether the folder's Claude Code project
// settings load in claude runs, and the argv shows how they are kept out:
// not while Claude Code has not trusted the folder, yes once the user's
// ~/.claude.json records its trust dialog accepted.
func TestClaudeProjectSettingsLine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(agents.ClaudeBinEnv, filepath.Join(t.TempDir(), "no-claude")) // the preview, then "not installed"
	dir, err := filepath.EvalSymlinks(roomRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	untrusted := "project settings: not loaded (Claude Code has not trusted this folder: run claude here once and accept, then they load)"
	_, out, _ := runCLI(t, "", "plan", "--yes", "--path", dir, "add a flag")
	if !strings.Contains(out, untrusted) || !strings.Contains(out, "--setting-sources user --strict-mcp-config -- <prompt") {
		t.Fatalf("untrusted folder's preview:\n%s", out)
	}
	if _, out, _ := runCLI(t, "", "doctor", "--path", dir); !strings.Contains(out, "project settings") ||
		!strings.Contains(out, "not loaded (Claude Code has not trusted this folder") {
		t.Fatalf("doctor, untrusted folder:\n%s", out)
	}

	cfg := `{"projects":{"` + filepath.ToSlash(dir) + `":{"hasTrustDialogAccepted":true}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	trusted := "project settings: loaded (Claude Code trusts " + dir + ")"
	_, out, _ = runCLI(t, "", "plan", "--yes", "--path", dir, "add a flag")
	if !strings.Contains(out, trusted) || strings.Contains(out, "--setting-sources") {
		t.Fatalf("trusted folder's preview:\n%s", out)
	}
	if _, out, _ := runCLI(t, "", "doctor", "--path", dir); !strings.Contains(out, "loaded (Claude Code trusts "+dir+")") {
		t.Fatalf("doctor, trusted folder:\n%s", out)
	}
}
