//go:build !linux || portable

package codex

// TUIGone: on macOS and Windows (and with -tags portable) the holder
// of a thread's writer lock is not known (a probe says only that one is
// held), so a thread a codex app-server daemon keeps loaded after its TUI
// quit counts as live until the daemon unloads it (about a minute).
func TUIGone(id, cwd string) bool { return false }
