package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Process identifies a Claude Code session's process across pid reuse: its
// pid, its start time (field 22 of /proc/<pid>/stat, clock ticks since
// boot) and the boot it started in.
type Process struct {
	PID    int    `json:"pid"`
	Start  uint64 `json:"startTicks,omitempty"`
	BootID string `json:"bootId,omitempty"`
}

// Known reports whether p names a process at all.
func (p Process) Known() bool { return p.PID > 0 }

// ProcStat is what ProcSource.Stat reads about a running process.
type ProcStat struct {
	PPID  int
	Comm  string // the executable's name, as the kernel keeps it
	State byte   // R, S, D, Z, X, ...
	Start uint64 // clock ticks since boot
}

// ProcSource reads facts about processes. The default (SystemProcs) reads
// /proc on Linux; tests inject fakes.
type ProcSource interface {
	// Cmdline returns the argv of pid.
	Cmdline(pid int) ([]string, error)
	// Stat returns pid's parent, name, state and start time;
	// ErrNoProcess when there is no such process, ErrProcUnsupported when
	// the platform cannot tell.
	Stat(pid int) (ProcStat, error)
	// BootID identifies the current boot ("" when unknown).
	BootID() string
}

// Errors of ProcSource.Stat.
var (
	ErrNoProcess       = errors.New("no such process")
	ErrProcUnsupported = errors.New("process facts are not available on this platform")
)

// SystemProcs is the ProcSource of this machine.
var SystemProcs ProcSource = sysProcs{}

// Identify returns the Process record of pid, read from src (zero when pid
// is not running).
func Identify(src ProcSource, pid int) Process {
	if pid <= 0 {
		return Process{}
	}
	st, err := src.Stat(pid)
	if errors.Is(err, ErrProcUnsupported) {
		return Process{PID: pid}
	}
	if err != nil || st.State == 'Z' || st.State == 'X' {
		return Process{}
	}
	return Process{PID: pid, Start: st.Start, BootID: src.BootID()}
}

// ThisProcess is the Process record of the calling process (tests use it
// to stand for a running session).
func ThisProcess() Process { return Identify(SystemProcs, os.Getpid()) }

// Liveness is what is known of a session's process.
type Liveness string

// The liveness states of a target.
const (
	Live    Liveness = "live"    // its recorded process runs
	Ended   Liveness = "ended"   // its recorded process is gone (or the pid was reused)
	Unknown Liveness = "unknown" // no process recorded (transcript only, or registered by an older relay-baton)
)

// Check reports whether p still runs: the same pid, started at the same
// tick in the same boot, and not a zombie. Where the platform cannot tell,
// a recorded process counts as live. Where it can, a record without the
// full evidence relay-baton's hooks write (start time, and boot id where
// the platform has one) is Unknown: a process.json of {"pid":1} committed
// to a repository names a running process, but no session of this machine.
func (p Process) Check(src ProcSource) Liveness {
	if !p.Known() {
		return Unknown
	}
	boot := src.BootID()
	if p.BootID != "" && boot != "" && boot != p.BootID {
		return Ended
	}
	st, err := src.Stat(p.PID)
	switch {
	case errors.Is(err, ErrProcUnsupported):
		return Live
	case p.Start == 0 || p.BootID == "" && boot != "":
		return Unknown // not registered here with full evidence
	case err != nil, st.State == 'Z' || st.State == 'X':
		return Ended
	case p.Start != 0 && st.Start != p.Start:
		return Ended
	}
	return Live
}

// processName is the file, in a session's chat folder, holding the
// session's process (written by its hooks, see RecordProcess).
const processName = "process.json"

// RecordProcess writes p as the session's process (process.json) unless it
// is already recorded: the SessionStart and UserPromptSubmit hooks call it,
// so a resumed session (a new process, the same id) is followed. A zero p
// is not recorded.
func (s *Session) RecordProcess(p Process) error {
	if !p.Known() {
		return nil
	}
	b, _ := json.Marshal(p)
	b = append(b, '\n')
	if old, err := readSmall(filepath.Join(s.dir, processName), 4096); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := s.checkDirs(); err != nil {
		return err
	}
	return writeFileAtomic(s.dir, processName, b, false) // rewritten at each start
}

// Process returns the session's recorded process (ok=false when none).
func (s *Session) Process() (Process, bool) {
	b, err := readSmall(filepath.Join(s.dir, processName), 4096)
	if err != nil {
		return Process{}, false
	}
	var p Process
	if json.Unmarshal(b, &p) != nil || !p.Known() {
		return Process{}, false
	}
	return p, true
}

// WhileAlive returns a context that ends when ctx does or when the
// session's process p ends (checked every poll, default 1 s): a waiter then
// stops holding the session's waiter lock for a session that is gone. A
// zero p only follows ctx.
func WhileAlive(ctx context.Context, p Process, src ProcSource, poll time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if !p.Known() {
		return ctx, cancel
	}
	if poll <= 0 {
		poll = time.Second
	}
	go func() {
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if p.Check(src) == Ended {
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// parseStat parses the text of /proc/<pid>/stat. comm may hold spaces and
// parentheses: it ends at the last ')'.
func parseStat(b []byte) (ProcStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return ProcStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return ProcStat{}, errors.New("malformed stat")
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcStat{}, errors.New("malformed stat")
	}
	return ProcStat{PPID: ppid, Comm: string(b[open+1 : end]), State: f[0][0], Start: start}, nil
}
