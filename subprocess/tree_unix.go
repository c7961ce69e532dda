//go:build unix && (!linux || portable)

package subprocess

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// guardScript is the guard of a child's process tree: a shell that reads
// the child's process group from its standard input, then waits. "done"
// (written by relay-baton when the run ended and the group was stopped)
// lets it exit; end of input without it means relay-baton died without
// stopping the group (SIGKILL, a crash): it sends the group SIGTERM, then
// SIGKILL a second later. It ignores the terminal's signals, and runs in a
// process group of its own, so Ctrl-C, a closed terminal or a kill of
// relay-baton's group do not take it first. Nothing but the number, which
// relay-baton writes, reaches the shell. "kill -s SIG -- -N" is the POSIX
// form that dash, bash and zsh all take for a group.
const guardScript = `trap '' INT HUP TERM QUIT
read -r g || exit 0
case $g in ''|*[!0-9]*) exit 0;; esac
if read -r x; then exit 0; fi
kill -s TERM -- "-$g" 2>/dev/null || exit 0
sleep 1
kill -s KILL -- "-$g" 2>/dev/null
exit 0`

// tree is a child's process tree: its process group (the child leads it),
// watched by a guard process that stops the group if relay-baton dies
// first. On Linux the child also gets SIGKILL when relay-baton dies
// (PR_SET_PDEATHSIG), should the guard itself be killed.
type tree struct {
	cmd   *exec.Cmd
	grace time.Duration
	guard *exec.Cmd
	w     *os.File // the guard's standard input
}

// start starts the guard, then the child in a new process group.
func (t *tree) start() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	guard := exec.Command("/bin/sh", "-c", guardScript, "relay-baton-guard")
	guard.Stdin = r
	guard.Env = []string{"PATH=/usr/bin:/bin"} // sleep; nothing of the user's environment
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := guard.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("start the guard of the child's processes (/bin/sh): %w", err)
	}
	r.Close()
	t.guard, t.w = guard, w
	t.cmd.SysProcAttr = groupAttr()
	if err := t.cmd.Start(); err != nil {
		t.close()
		return err
	}
	if _, err := fmt.Fprintf(w, "%d\n", t.cmd.Process.Pid); err != nil {
		// The guard is gone: do not run a child nobody would stop.
		t.kill()
		t.cmd.Wait()
		t.close()
		return fmt.Errorf("the guard of the child's processes ended early: %w", err)
	}
	return nil
}

// terminate asks the whole tree to end (SIGTERM to the group).
func (t *tree) terminate() { _ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGTERM) }

// kill ends the whole tree (SIGKILL to the group).
func (t *tree) kill() { _ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL) }

// close releases the guard once relay-baton has stopped the group itself.
func (t *tree) close() {
	if t.w == nil {
		return
	}
	_, _ = t.w.Write([]byte("done\n"))
	t.w.Close()
	t.w = nil
	go t.guard.Wait() // it exits on reading "done"
}

// waitDelay is how long the output is awaited once the child exited or
// was asked to end: the grace period.
func waitDelay(grace time.Duration) time.Duration { return grace }

// pid is the child's pid, which is also its process group's id.
func (t *tree) pid() int { return t.cmd.Process.Pid }
