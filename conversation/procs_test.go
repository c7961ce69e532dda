package conversation

import (
	"os"
	"sync"

	"github.com/relay-baton/relay-baton/procfacts"
)

// fakeProcs is an injected /proc: argv and stat per pid.
type fakeProcs struct {
	mu      sync.Mutex
	argv    map[int][]string
	stat    map[int]procfacts.Stat
	boot    string
	noProcs bool // the platform cannot tell (procfacts.ErrUnsupported)
}

func (f *fakeProcs) Cmdline(pid int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noProcs {
		return nil, procfacts.ErrUnsupported
	}
	a, ok := f.argv[pid]
	if !ok {
		return nil, os.ErrPermission
	}
	return a, nil
}

func (f *fakeProcs) Stat(pid int) (procfacts.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noProcs {
		return procfacts.Stat{}, procfacts.ErrUnsupported
	}
	st, ok := f.stat[pid]
	if !ok {
		return procfacts.Stat{}, procfacts.ErrNoProcess
	}
	return st, nil
}

func (f *fakeProcs) BootID() string { return f.boot }

func (f *fakeProcs) set(pid int, st procfacts.Stat, argv ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.argv == nil {
		f.argv, f.stat = map[int][]string{}, map[int]procfacts.Stat{}
	}
	if argv != nil {
		f.argv[pid] = argv
	}
	f.stat[pid] = st
}

func (f *fakeProcs) kill(pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.argv, pid)
	delete(f.stat, pid)
}
