//go:build linux && !portable

package procfacts

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcs reads /proc.
type sysProcs struct{}

func (sysProcs) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty cmdline (a zombie or a kernel thread)")
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

func (sysProcs) Stat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return Stat{}, ErrNoProcess
	}
	if err != nil {
		return Stat{}, err
	}
	return parseStat(b)
}

func (sysProcs) BootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
