package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A --path that is no directory is a bad argument (exit 2) whose message
// names the flag and what to give.
func TestBadPathIsAUsageError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, args := range [][]string{{"chat", "--path", missing}, {"status", "--path", missing}, {"note", "--path", missing, "x"}} {
		code, _, errs := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errs, "--path "+missing+": no such directory") || !strings.Contains(errs, "--path DIR") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
