package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

// EnableConsole turns on ANSI escape processing (colours, cursor moves) on
// the Windows console behind stdout and stderr; Windows Terminal has it on
// already, the classic console does not. It reports whether both accept it
// (a pipe or a file is left alone and counts as accepting).
func EnableConsole() bool {
	ok := true
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		h := windows.Handle(f.Fd())
		var mode uint32
		if windows.GetConsoleMode(h, &mode) != nil {
			continue // not a console
		}
		if windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) != nil {
			ok = false
		}
	}
	return ok
}
