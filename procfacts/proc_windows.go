package procfacts

import (
	"errors"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProcs reads process facts from the Tool Help snapshot (parent, name)
// and GetProcessTimes (start: the creation time, in 100 ns units since
// 1601). Windows gives no other process's argv without reading its memory:
// Cmdline is unsupported, and a hook then decides from Claude Code's
// environment. BootID is unknown ("").
type sysProcs struct{}

func (sysProcs) Cmdline(int) ([]string, error) { return nil, ErrUnsupported }

func (sysProcs) Stat(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, ErrNoProcess
	}
	if !Alive(pid) {
		return Stat{}, ErrNoProcess
	}
	st := Stat{State: 'R'}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return Stat{}, err
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	found := false
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if int(e.ProcessID) == pid {
			st.PPID = int(e.ParentProcessID)
			st.Comm = strings.TrimSuffix(windows.UTF16ToString(e.ExeFile[:]), ".exe")
			found = true
			break
		}
	}
	if !found {
		return Stat{}, ErrNoProcess
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return Stat{}, ErrNoProcess
		}
		return st, nil // another user's process: alive, start unknown
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) == nil {
		st.Start = uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)
	}
	return st, nil
}

func (sysProcs) BootID() string { return "" }
