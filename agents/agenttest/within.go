package agenttest

import (
	"testing"
	"time"
)

// Within runs f and fails the test when it has not returned after a
// generous bound (10 s): for code that must never block, such as an
// open(2) of a FIFO without a writer, which never returns.
func Within[T any](t testing.TB, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked", what)
		panic("unreachable")
	}
}
