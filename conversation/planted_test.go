package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/procfacts"
)

// A process record without the start time and boot id the hooks write
// names no session of this machine, even when the pid runs.
func TestPidOnlyRecordIsNotLive(t *testing.T) {
	if st := (procfacts.Process{PID: 1}).Check(procfacts.System); st == procfacts.Live {
		t.Fatalf(`{"pid":1} checks %s, want not live`, st)
	}
	me := procfacts.ThisProcess()
	if me.Start == 0 {
		t.Skip("no process facts on this platform")
	}
	if st := me.Check(procfacts.System); st != procfacts.Live {
		t.Fatalf("this process, fully recorded, is %s", st)
	}
}

func TestGitignoreRepaired(t *testing.T) {
	for in, repaired := range map[string]bool{"!*\n": true, "*\n!inbox\n": true, "# mine\n": true, "x": true, ignoreAll: false, "*\n": false, "!a\n*\n": false} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, ".gitignore"), []byte(in), 0o644)
		if w := ensureIgnored(d); w != "" {
			t.Fatalf("%q: %s", in, w)
		}
		b, _ := os.ReadFile(filepath.Join(d, ".gitignore"))
		if got := string(b) != in; got != repaired || !ignoresAll(b) || !strings.HasPrefix(string(b), in) {
			t.Errorf("%q became %q", in, b)
		}
	}
	d := t.TempDir()
	os.Symlink("/etc/hostname", filepath.Join(d, ".gitignore"))
	if w := ensureIgnored(d); w == "" {
		t.Error("a symlinked .gitignore gives no warning")
	}
}
