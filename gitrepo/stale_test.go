package gitrepo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/relay-baton/relay-baton/gitrepo"
)

// Snapshot folders of a relay-baton that is gone are removed; this
// process's, a live one's, one without a pid in its name and a link are
// left alone (and so is the link's target).
func TestRemoveStaleSteps(t *testing.T) {
	dir := t.TempDir()
	// A pid that was just freed: a process that ran and was waited for.
	c := exec.Command(os.Args[0], "-test.run", "^$")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(c.Process.Pid)
	live := strconv.Itoa(os.Getppid())
	if runtime.GOOS != "windows" {
		live = "1"
	}
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "objects"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := mk("relay-baton-step-" + dead + "-123")
	kept := []string{mk("relay-baton-step-" + strconv.Itoa(os.Getpid()) + "-1"), mk("relay-baton-step-" + live + "-2"), mk("relay-baton-step-abc"), mk("other-" + dead + "-3")}
	target := mk("target")
	link := filepath.Join(dir, "relay-baton-step-"+dead+"-link")
	if err := os.Symlink(target, link); err == nil {
		kept = append(kept, link, target)
	}
	removed := gitrepo.RemoveStaleSteps(dir)
	if len(removed) != 1 || removed[0] != gone {
		t.Fatalf("removed %q, want only %s", removed, gone)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", gone, err)
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
