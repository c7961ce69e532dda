//go:build unix

package testkit

import (
	"syscall"
	"testing"
)

// MakeFIFO makes a named pipe at p.
func MakeFIFO(t testing.TB, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}
