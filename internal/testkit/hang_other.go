//go:build !unix

package testkit

import "testing"

// HangingExe: the stand-in is a shell script, which Windows does not run.
func HangingExe(t testing.TB, name string) (bin string, started func() bool) {
	t.Helper()
	t.Skip("the hanging stand-in is a shell script")
	return "", nil
}
