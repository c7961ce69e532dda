package main

import (
	"strings"
	"testing"
)

// With no agent CLI to run, selftest checked nothing: it says so, names the
// install, and exits 1 (not "0 ok, 0 changed, 2 skipped" and 0).
func TestSelftestWithNoCLIExitsNonZero(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("RELAY_BATON_CLAUDE", "")
	t.Setenv("RELAY_BATON_CODEX", "")
	code, out, errs := runCLI(t, "", "selftest")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"selftest checked nothing", "npm install -g @anthropic-ai/claude-code@", "RELAY_BATON_CLAUDE / RELAY_BATON_CODEX"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "0 ok, 0 changed, 2 skipped") {
		t.Errorf("stdout:\n%s", out)
	}
	if code, _, _ := runCLI(t, "", "selftest", "--json"); code != 1 {
		t.Errorf("--json: exit %d, want 1", code)
	}
}
