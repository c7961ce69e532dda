//go:build darwin && !portable

package procfacts

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// sysProcs reads process facts through sysctl: kern.proc.pid (kinfo_proc:
// parent, name, state, start time), kern.procargs2 (argv) and
// kern.bootsessionuuid (the boot; kern.boottime on systems without it).
type sysProcs struct{}

func (sysProcs) Cmdline(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	return parseProcArgs2(b)
}

func (sysProcs) Stat(pid int) (Stat, error) {
	b, err := unix.SysctlRaw("kern.proc.pid", pid)
	if errors.Is(err, unix.ESRCH) {
		return Stat{}, ErrNoProcess
	}
	if err != nil {
		return Stat{}, err
	}
	return parseKinfoProc(b, pid)
}

func (sysProcs) BootID() string {
	if id, err := unix.Sysctl("kern.bootsessionuuid"); err == nil && id != "" {
		return id
	}
	if tv, err := unix.SysctlTimeval("kern.boottime"); err == nil {
		return strconv.FormatInt(tv.Sec, 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
	}
	return ""
}
