package gitrepo

import (
	"io/fs"

	"golang.org/x/sys/windows"
)

// processAlive reports whether pid names a live process: one that can be
// opened and has not exited (a process that cannot be opened for lack of
// rights counts as live).
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == windows.ERROR_ACCESS_DENIED
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// ownedByMe: the temporary folder is the user's own on Windows.
func ownedByMe(fs.FileInfo) bool { return true }
