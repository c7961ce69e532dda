// Package procfacts reads facts about processes, the one thing that
// differs per system (proc_linux.go reads /proc, proc_darwin.go sysctl,
// proc_ps.go ps(1) for the BSDs and -tags portable, proc_windows.go the Tool
// Help snapshot), and decides on them the same way everywhere: a process
// named across pid reuse (Process: pid, start time, boot), whether it
// still runs (Check, Alive), and a context that ends with it (WhileAlive).
package procfacts

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// Process identifies a Claude Code session's process across pid reuse: its
// pid, its start time and the boot it started in. What Start counts is the
// system's own (Source): clock ticks since boot on Linux (field 22 of
// /proc/<pid>/stat), microseconds since the epoch on macOS (kinfo_proc's
// p_starttime), seconds since the epoch from ps(1), 100 ns units since
// 1601 on Windows; it is only ever compared with itself.
type Process struct {
	PID    int    `json:"pid"`
	Start  uint64 `json:"startTicks,omitempty"`
	BootID string `json:"bootId,omitempty"`
}

// Known reports whether p names a process at all.
func (p Process) Known() bool { return p.PID > 0 }

// Stat is what Source.Stat reads about a running process.
type Stat struct {
	PPID  int
	Comm  string // the executable's name, as the kernel keeps it
	State byte   // R, S, D, Z, X, ...
	Start uint64 // the start time, in the system's unit (see Process)
}

// Source reads facts about processes: the one thing that differs per
// system (proc_linux.go reads /proc, proc_darwin.go sysctl, proc_ps.go
// ps(1) for the BSDs and -tags portable, proc_windows.go the Tool Help
// snapshot); the decisions on them (Identify, Check, hook.Detect) are the
// same everywhere. Tests inject fakes.
type Source interface {
	// Cmdline returns the argv of pid.
	Cmdline(pid int) ([]string, error)
	// Stat returns pid's parent, name, state and start time;
	// ErrNoProcess when there is no such process, ErrUnsupported when
	// the platform cannot tell.
	Stat(pid int) (Stat, error)
	// BootID identifies the current boot ("" when unknown).
	BootID() string
}

// Errors of Source.Stat.
var (
	ErrNoProcess   = errors.New("no such process")
	ErrUnsupported = errors.New("process facts are not available on this platform")
)

// System is the Source of this machine.
var System Source = sysProcs{}

// Identify returns the Process record of pid, read from src (zero when pid
// is not running).
func Identify(src Source, pid int) Process {
	if pid <= 0 {
		return Process{}
	}
	st, err := src.Stat(pid)
	if errors.Is(err, ErrUnsupported) {
		return Process{PID: pid}
	}
	if err != nil || st.State == 'Z' || st.State == 'X' {
		return Process{}
	}
	return Process{PID: pid, Start: st.Start, BootID: src.BootID()}
}

// ThisProcess is the Process record of the calling process (tests use it
// to stand for a running session).
func ThisProcess() Process { return Identify(System, os.Getpid()) }

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
func (p Process) Check(src Source) Liveness {
	if !p.Known() {
		return Unknown
	}
	boot := src.BootID()
	if p.BootID != "" && boot != "" && boot != p.BootID {
		return Ended
	}
	st, err := src.Stat(p.PID)
	switch {
	case errors.Is(err, ErrUnsupported):
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

// WhileAlive returns a context that ends when ctx does or when the
// session's process p ends (checked every poll, default 1 s): a waiter then
// stops holding the session's waiter lock for a session that is gone. A
// zero p only follows ctx.
func WhileAlive(ctx context.Context, p Process, src Source, poll time.Duration) (context.Context, context.CancelFunc) {
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
func parseStat(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, errors.New("malformed stat")
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return Stat{}, errors.New("malformed stat")
	}
	return Stat{PPID: ppid, Comm: string(b[open+1 : end]), State: f[0][0], Start: start}, nil
}
