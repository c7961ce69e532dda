//go:build unix

package hookinstall

import (
	"syscall"
	"testing"
)

// makeFIFO makes a named pipe at p.
func makeFIFO(t testing.TB, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}
