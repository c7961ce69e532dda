//go:build !windows

package conversation

// NativeLaneNote says what of the lane (chat with a running session) does
// not work on this system, and what to use instead; "" where it all works.
func NativeLaneNote() string { return "" }
