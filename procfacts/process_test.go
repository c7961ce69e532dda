package procfacts

import (
	"errors"
	"os"
	"testing"
)

// The real /proc: this test process is live, with the start time the
// kernel reports; its ended child is not.
func TestSystemProcs(t *testing.T) {
	p := Identify(System, os.Getpid())
	if !p.Known() {
		t.Skip("no process facts on this platform")
	}
	if p.Start == 0 || p.BootID == "" {
		t.Fatalf("Identify(self) = %+v", p)
	}
	if p.Check(System) != Live {
		t.Fatal("this process is not live")
	}
	argv, err := System.Cmdline(os.Getpid())
	if err != nil || len(argv) != len(os.Args) || argv[0] != os.Args[0] {
		t.Fatalf("Cmdline(self) = %q, %v; want %q", argv, err, os.Args)
	}
	if _, err := System.Stat(1 << 30); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("Stat(no such pid) = %v", err)
	}
	moved := p
	moved.Start++
	if moved.Check(System) != Ended {
		t.Fatal("a different start time must read as a reused pid")
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (we (ird) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 987654 1000 100 18446744073709551615\n"
	st, err := parseStat([]byte(line))
	if err != nil || st.PPID != 17 || st.Comm != "we (ird) name" || st.State != 'S' || st.Start != 987654 {
		t.Fatalf("parseStat: %+v %v", st, err)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 2", "1 (x) SS 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

// A process record without the start time and boot id the hooks write
// names no session of this machine, even when the pid runs.
func TestPidOnlyRecordIsNotLive(t *testing.T) {
	if st := (Process{PID: 1}).Check(System); st == Live {
		t.Fatalf(`{"pid":1} checks %s, want not live`, st)
	}
	me := ThisProcess()
	if me.Start == 0 {
		t.Skip("no process facts on this platform")
	}
	if st := me.Check(System); st != Live {
		t.Fatalf("this process, fully recorded, is %s", st)
	}
}
