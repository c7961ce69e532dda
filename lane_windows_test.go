package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On native Windows, hook install refuses and says what does not work and
// that WSL 2 does; targets and send say it too.
func TestNativeWindowsLaneSaysSo(t *testing.T) {
	ws := roomRepo(t)
	code, _, errs := runCLI(t, "", "hook", "install", "--workspace", ws)
	if code != 1 || !strings.Contains(errs, "WSL 2") || !strings.Contains(errs, "nothing was installed") {
		t.Fatalf("hook install: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("hook install wrote settings on native Windows: %v", err)
	}
	code, _, errs = runCLI(t, "", "targets", "--workspace", ws)
	if code != 0 || !strings.Contains(errs, "WSL 2") {
		t.Fatalf("targets: exit %d, stderr %q", code, errs)
	}
}
