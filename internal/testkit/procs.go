package testkit

import (
	"os"
	"sync"

	"github.com/relay-baton/relay-baton/procfacts"
)

// FakeProcs is an injected /proc for procfacts: argv and stat per pid,
// the boot id, or (NoProcs) a platform that cannot tell.
type FakeProcs struct {
	mu      sync.Mutex
	argv    map[int][]string
	stat    map[int]procfacts.Stat
	Boot    string
	NoProcs bool // the platform cannot tell (procfacts.ErrUnsupported)
}

func (f *FakeProcs) Cmdline(pid int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.NoProcs {
		return nil, procfacts.ErrUnsupported
	}
	a, ok := f.argv[pid]
	if !ok {
		return nil, os.ErrPermission
	}
	return a, nil
}

func (f *FakeProcs) Stat(pid int) (procfacts.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.NoProcs {
		return procfacts.Stat{}, procfacts.ErrUnsupported
	}
	st, ok := f.stat[pid]
	if !ok {
		return procfacts.Stat{}, procfacts.ErrNoProcess
	}
	return st, nil
}

func (f *FakeProcs) BootID() string { return f.Boot }

// Set gives pid its stat and, when argv is not nil, its command line.
func (f *FakeProcs) Set(pid int, st procfacts.Stat, argv ...string) {
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

// Kill makes pid gone.
func (f *FakeProcs) Kill(pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.argv, pid)
	delete(f.stat, pid)
}
