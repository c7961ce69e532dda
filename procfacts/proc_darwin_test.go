//go:build darwin && !portable

package procfacts

import (
	"os"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The offsets kinfo.go reads match this system's struct kinfo_proc.
func TestKinfoOffsetsMatchSystem(t *testing.T) {
	var k unix.KinfoProc
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"size", kinfoSize, unsafe.Sizeof(k)},
		{"p_starttime", kinfoStartSec, unsafe.Offsetof(k.Proc.P_starttime)},
		{"p_stat", kinfoStat, unsafe.Offsetof(k.Proc.P_stat)},
		{"p_pid", kinfoPID, unsafe.Offsetof(k.Proc.P_pid)},
		{"p_comm", kinfoComm, unsafe.Offsetof(k.Proc.P_comm)},
		{"e_ppid", kinfoPPID, unsafe.Offsetof(k.Eproc) + unsafe.Offsetof(k.Eproc.Ppid)},
	} {
		if c.got != c.want {
			t.Errorf("%s: kinfo.go has %d, the system %d", c.name, c.got, c.want)
		}
	}
}

// sysctl reads this very process.
func TestDarwinProcsReadThisProcess(t *testing.T) {
	var src sysProcs
	st, err := src.Stat(os.Getpid())
	if err != nil || st.PPID != os.Getppid() || st.Start == 0 || st.State == 'Z' {
		t.Fatalf("stat of this process %+v %v", st, err)
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", os.Getpid())
	if err != nil || uint64(k.Proc.P_starttime.Sec)*1e6+uint64(k.Proc.P_starttime.Usec) != st.Start {
		t.Fatalf("start %d, x/sys says %+v %v", st.Start, k.Proc.P_starttime, err)
	}
	argv, err := src.Cmdline(os.Getpid())
	if err != nil || !slices.Equal(argv, os.Args) {
		t.Fatalf("argv %q %v, want %q", argv, err, os.Args)
	}
	if b := src.BootID(); b == "" || b != src.BootID() {
		t.Fatalf("boot id %q", b)
	}
	if _, err := src.Stat(1 << 30); err != ErrNoProcess {
		t.Fatalf("no such pid: %v", err)
	}
}
