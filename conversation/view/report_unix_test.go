//go:build unix

package view

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
)

// With a claude too old for `agents --json` the report starts with the
// registry's one-line note, then the hooks' words.
func TestTargetsReportSaysWhyTheRegistryIsNotRead(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"error: unknown option '--json'\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(agents.ClaudeBinEnv, bin)
	t.Setenv(claudecode.NoRegistryEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	claudecode.ForgetRegistry()
	t.Cleanup(claudecode.ForgetRegistry)
	ws := t.TempDir()
	if _, err := conversation.ListTargets(ws); err != nil {
		t.Fatal(err)
	}
	note := claudecode.RegistryNote()
	if !strings.Contains(note, "unknown option '--json'") {
		t.Fatalf("note: %q", note)
	}
	var b strings.Builder
	if err := TargetsReport(&b, ws, nil, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), note+"\n") || !strings.Contains(b.String(), "Run 'relay-baton hook install'") {
		t.Fatalf("report:\n%s", b.String())
	}
}
