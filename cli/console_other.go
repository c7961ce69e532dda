//go:build !windows

package cli

// EnableConsole: terminals outside Windows process ANSI escapes already.
func EnableConsole() bool { return true }
