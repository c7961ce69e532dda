//go:build unix

package agenttest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// LiveProcesses lists the live (not zombie) processes of process group
// pgid (none when pgid <= 0), or whose command line holds marker, through
// ps(1): Linux and macOS alike. Each is "pid pgid stat args".
func LiveProcesses(t testing.TB, pgid int, marker string) []string {
	t.Helper()
	out, err := exec.Command("ps", "-A", "-o", "pid=,pgid=,stat=,args=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var left []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || strings.HasPrefix(f[2], "Z") {
			continue
		}
		if (pgid > 0 && f[1] == strconv.Itoa(pgid)) || strings.Contains(l, marker) {
			left = append(left, strings.TrimSpace(l))
		}
	}
	return left
}
