package repl

import "golang.org/x/sys/windows"

// waitReadable waits up to ms milliseconds for the console input handle fd
// to hold input events.
func waitReadable(fd int, ms int) (bool, error) {
	ev, err := windows.WaitForSingleObject(windows.Handle(fd), uint32(ms))
	switch {
	case err != nil:
		return false, err
	case ev == uint32(windows.WAIT_TIMEOUT):
		return false, nil
	}
	return true, nil
}

// tcflush discards the console's unread input.
func tcflush(fd int) error { return windows.FlushConsoleInputBuffer(windows.Handle(fd)) }
