package agenttest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func fakeExe(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// RELAY_BATON_AGENT_BIN_DIR picks the CLIs the e2e tests run, ahead of the
// pinned install and PATH, and a CLI missing from it is not taken from
// anywhere else (the run must test the versions asked for).
func TestFindBinHonoursBinDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the executable bit decides here")
	}
	onPath, binDir := t.TempDir(), t.TempDir()
	fakeExe(t, onPath, "claude")
	fakeExe(t, onPath, "codex")
	want := fakeExe(t, binDir, "claude")
	t.Setenv("PATH", onPath)
	t.Setenv("RELAY_BATON_TOOLS", t.TempDir())

	t.Setenv(BinDirEnv, "")
	if got := FindBin("claude"); got != filepath.Join(onPath, "claude") {
		t.Fatalf("without %s: FindBin(claude) = %q, want the one on PATH", BinDirEnv, got)
	}
	t.Setenv(BinDirEnv, binDir)
	if got := FindBin("claude"); got != want {
		t.Fatalf("FindBin(claude) = %q, want %q", got, want)
	}
	if got := FindBin("codex"); got != "" {
		t.Fatalf("FindBin(codex) = %q, want \"\": %s has no codex", got, BinDirEnv)
	}
}

// Every path that starts claude in the tests takes its environment from
// ClaudeEnv (OfflineEnv included): it must keep the CLI from updating
// itself from the registry in the middle of a test.
func TestClaudeEnvDisablesAutoUpdater(t *testing.T) {
	a := NewAnthropic(t)
	env := ClaudeEnv(t, a, "")
	if v, _ := EnvValue(env, "DISABLE_AUTOUPDATER"); v != "1" {
		t.Fatalf("ClaudeEnv: DISABLE_AUTOUPDATER=%q, want 1 (env %q)", v, env)
	}
	bin := fakeExe(t, t.TempDir(), "claude")
	t.Setenv(BinDirEnv, filepath.Dir(bin))
	env = OfflineEnv(t, a, nil)
	if v, _ := EnvValue(env, "DISABLE_AUTOUPDATER"); v != "1" {
		t.Fatalf("OfflineEnv: DISABLE_AUTOUPDATER=%q, want 1", v)
	}
	if v, _ := EnvValue(env, "RELAY_BATON_CLAUDE"); v != bin {
		t.Fatalf("OfflineEnv: RELAY_BATON_CLAUDE=%q, want %q", v, bin)
	}
}
