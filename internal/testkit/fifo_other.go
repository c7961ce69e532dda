//go:build !unix

package testkit

import "testing"

// MakeFIFO: Windows has no named pipes in the file system; a test of what
// relay-baton does with one has nothing to test there.
func MakeFIFO(t testing.TB, p string) {
	t.Helper()
	t.Skip("no FIFOs in the Windows file system")
}
