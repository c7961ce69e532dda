package testkit

import (
	"os"
	"testing"
)

// ShortDir is a folder for sockets, removed at the test's end: a socket's
// path has a length limit that t.TempDir's long names can pass.
func ShortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
