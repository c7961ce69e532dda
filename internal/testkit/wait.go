package testkit

import (
	"context"
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

// Cancelled runs f under a context of its own, cancels that context once
// started holds, and returns what f returns; the test fails when f has not
// returned within HangGuard of the cancellation (what names f).
func Cancelled[T any](t testing.TB, what string, started func() bool, f func(ctx context.Context) T) T {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan T, 1)
	go func() { done <- f(ctx) }()
	Eventually(t, what+" to start", started)
	cancel()
	select {
	case v := <-done:
		return v
	case <-time.After(HangGuard):
		t.Fatalf("%s did not end with its context", what)
		panic("unreachable")
	}
}
