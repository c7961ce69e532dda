//go:build unix && (portable || !(linux || darwin))

package procfacts

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// sysProcs reads process facts through ps(1), the way every Unix has (the
// BSDs, and Linux and macOS built with -tags portable): the same decisions
// as on Linux and macOS, from facts that need no /proc and no sysctl.
// Start is the start time in seconds since the epoch (ps's lstart), BootID
// the start time of process 1. Cmdline is ps's args split at spaces: an
// argument that holds a space is split too.
type sysProcs struct{}

// ps runs ps with args in the C locale and UTC, so lstart has one format.
func ps(args ...string) ([]byte, error) {
	cmd := exec.Command("ps", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	return cmd.Output()
}

func (sysProcs) Cmdline(pid int) ([]string, error) {
	out, err := ps("-ww", "-o", "args=", "-p", strconv.Itoa(pid))
	if err != nil {
		return nil, ErrNoProcess
	}
	argv := strings.Fields(string(out))
	if len(argv) == 0 {
		return nil, errors.New("empty args (a zombie or a kernel process)")
	}
	return argv, nil
}

func (sysProcs) Stat(pid int) (Stat, error) {
	out, err := ps("-o", "ppid=,stat=,lstart=,comm=", "-p", strconv.Itoa(pid))
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(bytes.TrimSpace(out)) == 0 {
		return Stat{}, ErrNoProcess // ps exits 1 when no process matched
	}
	if err != nil {
		return Stat{}, err
	}
	return parsePsStat(out)
}

// BootID is read once: process 1 starts with the boot.
func (sysProcs) BootID() string { return psBootID() }

var psBootID = sync.OnceValue(func() string {
	out, err := ps("-o", "lstart=", "-p", "1")
	if err != nil {
		return ""
	}
	t, err := parseLstart(strings.Fields(string(out)))
	if err != nil {
		return ""
	}
	return "ps-" + strconv.FormatInt(t, 10)
})
