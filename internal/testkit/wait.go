package testkit

import (
	"testing"
	"time"
)

// HangGuard is how long Eventually waits before it fails the test: a
// guard against a hang, never a measure of speed.
const HangGuard = time.Minute

// Eventually waits until cond holds, re-checking it every 10 ms, and
// fails the test when HangGuard passes first.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(HangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
