//go:build unix && (portable || !(linux || darwin))

package procfacts

import (
	"os"
	"strings"
	"testing"
)

// The ps(1) fact source reads this very process as /proc and sysctl do.
func TestPsProcsReadThisProcess(t *testing.T) {
	var src sysProcs
	st, err := src.Stat(os.Getpid())
	if err != nil || st.PPID != os.Getppid() || st.Start == 0 || st.State == 'Z' || st.Comm == "" {
		t.Fatalf("stat of this process %+v %v (ppid %d)", st, err, os.Getppid())
	}
	argv, err := src.Cmdline(os.Getpid())
	if err != nil || len(argv) == 0 || !strings.HasSuffix(argv[0], ".test") {
		t.Fatalf("argv %q %v", argv, err)
	}
	if b := src.BootID(); !strings.HasPrefix(b, "ps-") || b != src.BootID() {
		t.Fatalf("boot id %q", b)
	}
	if p := ThisProcess(); p.Check(src) != Live || p.Start != st.Start {
		t.Fatalf("this process %+v is %s", p, p.Check(src))
	}
	if _, err := src.Stat(1 << 30); err != ErrNoProcess {
		t.Fatalf("no such pid: %v", err)
	}
}
