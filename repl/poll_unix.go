//go:build unix

package repl

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitReadable waits up to ms milliseconds for input on the terminal fd;
// an interrupted wait reports no input.
func waitReadable(fd int, ms int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, ms)
	if errors.Is(err, unix.EINTR) {
		return false, nil
	}
	return n > 0, err
}
