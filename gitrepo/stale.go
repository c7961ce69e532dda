package gitrepo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// stepPrefix begins the name of a snapshot store's folder in the
// temporary folder: relay-baton-step-<pid>-<random>, pid being the
// relay-baton that made it.
const stepPrefix = "relay-baton-step-"

// stepDirPattern is os.MkdirTemp's pattern for this process's stores.
func stepDirPattern() string { return stepPrefix + strconv.Itoa(os.Getpid()) + "-" }

var staleOnce sync.Once

// RemoveStaleSteps removes the snapshot folders that relay-baton runs
// killed before they could (SIGKILL, a crash, a power cut) left in dir
// (the temporary folder when ""): only folders named for a process that
// is gone, and, on Unix, owned by this user; never through a link. It
// returns the folders removed.
func RemoveStaleSteps(dir string) []string {
	if dir == "" {
		dir = os.TempDir()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), stepPrefix)
		if !ok || !e.IsDir() { // a link is not a folder here: left alone
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || !ownedByMe(fi) || processAlive(pid) {
			continue
		}
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
