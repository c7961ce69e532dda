package procfacts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
)

// The byte layouts macOS's sysctl returns for process facts. They are
// parsed here, on every system, so the darwin fact source (proc_darwin.go)
// is tested by every test run; on macOS its test also checks these offsets
// against golang.org/x/sys/unix's KinfoProc.

// kinfo_proc (struct kinfo_proc from <sys/sysctl.h>, 64-bit macOS, amd64
// and arm64 alike): the answer to sysctl {CTL_KERN, KERN_PROC,
// KERN_PROC_PID, pid}. Offsets of the fields read.
const (
	kinfoSize      = 648
	kinfoStartSec  = 0   // kp_proc.p_starttime.tv_sec (int64)
	kinfoStartUsec = 8   // kp_proc.p_starttime.tv_usec (int32)
	kinfoStat      = 36  // kp_proc.p_stat (int8: SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4, SZOMB 5)
	kinfoPID       = 40  // kp_proc.p_pid (int32)
	kinfoComm      = 243 // kp_proc.p_comm ([MAXCOMLEN+1]byte)
	kinfoCommLen   = 17
	kinfoPPID      = 560 // kp_eproc.e_ppid (int32)
)

// parseKinfoProc reads pid's parent, name, state and start time from a
// kinfo_proc. Start is the start time in microseconds since the epoch
// (p_starttime): a process's identity with its pid, as start ticks are on
// Linux. An empty answer (sysctl found no such pid) is ErrNoProcess.
func parseKinfoProc(b []byte, pid int) (Stat, error) {
	if len(b) == 0 {
		return Stat{}, ErrNoProcess
	}
	if len(b) < kinfoSize {
		return Stat{}, errors.New("kinfo_proc: " + strconv.Itoa(len(b)) + " bytes, want " + strconv.Itoa(kinfoSize))
	}
	le := binary.LittleEndian // both macOS architectures
	if got := int(int32(le.Uint32(b[kinfoPID:]))); got != pid {
		return Stat{}, ErrNoProcess
	}
	sec, usec := int64(le.Uint64(b[kinfoStartSec:])), int64(int32(le.Uint32(b[kinfoStartUsec:])))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return Stat{}, errors.New("kinfo_proc: malformed start time")
	}
	comm := b[kinfoComm : kinfoComm+kinfoCommLen]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	state := byte('?')
	switch b[kinfoStat] {
	case 1:
		state = 'I'
	case 2:
		state = 'R'
	case 3:
		state = 'S'
	case 4:
		state = 'T'
	case 5:
		state = 'Z'
	}
	return Stat{
		PPID:  int(int32(le.Uint32(b[kinfoPPID:]))),
		Comm:  string(comm),
		State: state,
		Start: uint64(sec)*1e6 + uint64(usec),
	}, nil
}

// parseProcArgs2 reads argv from the answer to sysctl {CTL_KERN,
// KERN_PROCARGS2, pid}: argc (int32), the executable's path and its NUL
// terminator, NUL padding, then argc NUL-terminated arguments (the
// environment follows, and is not read).
func parseProcArgs2(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, errors.New("procargs2: too short")
	}
	argc := int(int32(binary.LittleEndian.Uint32(b)))
	rest := b[4:]
	i := bytes.IndexByte(rest, 0)
	if argc <= 0 || argc > len(rest) || i < 0 {
		return nil, errors.New("procargs2: malformed (argc " + strconv.Itoa(argc) + ")")
	}
	rest = rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	argv := make([]string, 0, argc)
	for len(argv) < argc {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			return nil, errors.New("procargs2: argument " + strconv.Itoa(len(argv)) + " unterminated")
		}
		argv = append(argv, string(rest[:j]))
		rest = rest[j+1:]
	}
	return argv, nil
}

// Recorded is a Source serving recorded sysctl answers (kinfo_proc and
// procargs2 bytes per pid, testdata/darwin holds samples) through the
// darwin parsers, so decisions on macOS's facts can be checked on any
// system. A pid without a procargs2 answer fails Cmdline as sysctl does.
type Recorded struct {
	Kinfo, Args map[int][]byte
	Boot        string
}

// Cmdline parses pid's recorded procargs2 answer.
func (r Recorded) Cmdline(pid int) ([]string, error) {
	b, ok := r.Args[pid]
	if !ok {
		return nil, errors.New("EINVAL")
	}
	return parseProcArgs2(b)
}

// Stat parses pid's recorded kinfo_proc answer.
func (r Recorded) Stat(pid int) (Stat, error) { return parseKinfoProc(r.Kinfo[pid], pid) }

// BootID is the recorded boot.
func (r Recorded) BootID() string { return r.Boot }
