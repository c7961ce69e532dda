//go:build unix

package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// HangingExe writes an executable called name in a fresh folder: a
// stand-in for a CLI that hangs (it marks its start, then waits ten
// minutes). It returns its path and a check that it has started.
func HangingExe(t testing.TB, name string) (bin string, started func() bool) {
	t.Helper()
	dir := t.TempDir()
	bin, mark := filepath.Join(dir, name), filepath.Join(dir, "started")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n: > '"+mark+"'\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() bool { _, err := os.Stat(mark); return err == nil }
}
