//go:build !portable

package subprocess

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux a child runs under a guard: relay-baton's own binary started
// again (/proc/self/exe) as a small process that is a child subreaper
// (PR_SET_CHILD_SUBREAPER). The guard starts the child in a process group
// of its own, with PR_SET_PDEATHSIG, and holds the whole tree: whatever
// the child starts and leaves behind, double-forked or after setsid, is
// re-parented to the guard, not to init. The guard ends every descendant,
// found by walking /proc from itself, in three cases:
//   - the child exited: what it left is asked to end (SIGTERM), and killed
//     after the grace period;
//   - relay-baton asked ("term": the same, "kill": SIGKILL at once);
//   - relay-baton died (SIGKILL, a crash): the guard's standard input, a
//     pipe only relay-baton holds, reads end of file; everything is killed.
//
// It exits once it has no child left, with the child's exit status (or
// dying of the signal that killed it), so that relay-baton sees the
// child's own. The guard needs no privilege (no cgroup, no root) and
// works the same as root. What it cannot do: end a descendant of another
// user (a setuid program), or anything once the guard itself is killed
// with SIGKILL (the child still gets SIGKILL then, through
// PR_SET_PDEATHSIG; what it left behind is re-parented upwards).

const (
	// guardEnv carries the grace period (nanoseconds) to the guard; its
	// presence, with guardName as argv[0], makes the process a guard.
	guardEnv = "RELAY_BATON_SUBPROCESS_GUARD"
	// guardName is the guard's argv[0] (what ps shows).
	guardName = "relay-baton-guard"
)

func init() {
	if v, ok := os.LookupEnv(guardEnv); ok && len(os.Args) >= 3 && os.Args[0] == guardName {
		os.Exit(guardMain(v, os.Args[1], os.Args[2:]))
	}
}

// waitDelay bounds how long Run awaits the output once the guard was asked
// to end the tree or the child exited: the guard itself kills what is left
// after grace, so this is only a net under it.
func waitDelay(grace time.Duration) time.Duration {
	if grace <= 0 {
		return 0
	}
	return 2*grace + 5*time.Second
}

// tree is a child's process tree as relay-baton sees it: the guard (its
// exec.Cmd, what Run waits for), the control pipe to it, and the child's
// pid (its process group's id).
type tree struct {
	cmd   *exec.Cmd
	grace time.Duration
	mu    sync.Mutex
	ctl   *os.File // the guard's standard input
	child int
}

// start turns t.cmd into the guard's command, starts it and reads the
// child's pid (or why it could not start) from the guard.
func (t *tree) start() error {
	if t.cmd.Err != nil {
		return t.cmd.Err
	}
	path, args := t.cmd.Path, t.cmd.Args
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return err
	}
	env := t.cmd.Env
	if env == nil {
		env = os.Environ()
	}
	t.cmd.Env = append(env[:len(env):len(env)], guardEnv+"="+strconv.FormatInt(int64(t.grace), 10))
	t.cmd.Path = "/proc/self/exe"
	t.cmd.Args = append([]string{guardName, path}, args...)
	t.cmd.Stdin = ctlR
	t.cmd.ExtraFiles = []*os.File{stW}
	// A process group of its own: Ctrl-C, a closed terminal or a kill
	// of relay-baton's group do not reach the guard (relay-baton decides
	// what they mean for the run, and tells the guard).
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = t.cmd.Start()
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return fmt.Errorf("start the guard of the child's processes (%s): %w", path, err)
	}
	// Cancellation may come from now on (exec.Cmd's Cancel): the guard
	// reads its requests from the start.
	t.mu.Lock()
	t.ctl = ctlW
	t.mu.Unlock()
	line, rerr := bufio.NewReader(stR).ReadString('\n')
	stR.Close()
	if v, ok := strings.CutPrefix(strings.TrimSpace(line), "pid "); ok {
		if pid, err := strconv.Atoi(v); err == nil && pid > 0 {
			t.child = pid
			return nil
		}
	}
	t.close() // the guard ends whatever it started
	t.cmd.Wait()
	if why, ok := strings.CutPrefix(strings.TrimSpace(line), "err "); ok {
		return errors.New(why)
	}
	return fmt.Errorf("the guard of the child's processes ended early (%w)", rerr)
}

// pid is the child's pid, which is also its process group's id.
func (t *tree) pid() int { return t.child }

func (t *tree) send(word string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctl != nil {
		_, _ = t.ctl.Write([]byte(word + "\n"))
	}
}

// terminate asks the whole tree to end: SIGTERM to every descendant of the
// guard, SIGKILL after the grace period.
func (t *tree) terminate() { t.send("term") }

// kill ends the whole tree at once.
func (t *tree) kill() { t.send("kill") }

// close lets the guard go: it has exited (Run waited for it), or, if it
// has not, reads end of file and kills what is left.
func (t *tree) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctl != nil {
		t.ctl.Close()
		t.ctl = nil
	}
}

// guardMain is the guard: it runs path with argv and holds its tree (see
// above). It returns the exit code when the child did not die of a signal.
func guardMain(graceNS, path string, argv []string) int {
	status := os.NewFile(3, "status")
	syscall.CloseOnExec(3)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(status, "err "+format+"\n", a...)
		return 127
	}
	n, err := strconv.ParseInt(graceNS, 10, 64)
	if err != nil || n < 0 {
		return fail("guard: bad grace period %q", graceNS)
	}
	grace := time.Duration(n)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("guard: PR_SET_CHILD_SUBREAPER: %v", err)
	}
	g := &guard{self: os.Getpid()}

	// A signal to the guard itself (its group is its own, so not the
	// terminal's) asks for the tree to end, as "term" does. Caught, not
	// ignored: an ignored signal would stay ignored in the child.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGQUIT)
	go func() {
		for range sigs {
			g.signalAll(syscall.SIGTERM)
			time.AfterFunc(grace, g.killAll)
		}
	}()

	// relay-baton's requests, and its death (end of file).
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadString('\n')
			switch {
			case err != nil:
				g.killAll()
				return
			case line == "kill\n":
				g.killAll()
			case line == "term\n":
				g.signalAll(syscall.SIGTERM)
				time.AfterFunc(grace, g.killAll)
			}
		}
	}()

	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, guardEnv+"=") {
			env = append(env, kv)
		}
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fail("guard: %v", err)
	}
	// PR_SET_PDEATHSIG fires when the thread that forked ends: this one,
	// locked, lives as long as the guard.
	runtime.LockOSThread()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{null.Fd(), 1, 2},
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}})
	null.Close()
	if err != nil {
		return fail("%s", (&os.PathError{Op: "fork/exec", Path: path, Err: err}).Error())
	}
	g.setChild(pid)
	fmt.Fprintf(status, "pid %d\n", pid)
	status.Close()

	var childStatus syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: no descendant is left
			break
		}
		if wpid == pid {
			childStatus = ws
			if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); errors.Is(err, syscall.ECHILD) {
				break // it left nothing behind: no descendant to walk /proc for
			}
			// What the child left behind is asked to end, and killed
			// after the grace period.
			g.signalAll(syscall.SIGTERM)
			if grace > 0 {
				time.AfterFunc(grace, g.killAll)
			} else {
				g.killAll()
			}
		}
		g.again()
	}
	switch {
	case childStatus.Signaled():
		sig := childStatus.Signal()
		signal.Reset()
		_ = syscall.Kill(os.Getpid(), sig) // die as the child did
		return 128 + int(sig)
	default:
		return childStatus.ExitStatus()
	}
}

// guard is what the guard knows of its tree.
type guard struct {
	self    int
	mu      sync.Mutex
	child   int  // the child's pid (its group's id); 0 before it starts
	killing bool // every descendant is killed, again after each one that ends
}

func (g *guard) setChild(pid int) {
	g.mu.Lock()
	g.child = pid
	killing := g.killing
	g.mu.Unlock()
	if killing {
		g.killAll()
	}
}

// killAll kills every descendant now, and again whenever one ends (a
// process that forked between the walk and the kill is found then).
func (g *guard) killAll() {
	g.mu.Lock()
	g.killing = true
	g.mu.Unlock()
	g.signalAll(syscall.SIGKILL)
}

// again repeats the kill after a descendant ended, once killing.
func (g *guard) again() {
	g.mu.Lock()
	killing := g.killing
	g.mu.Unlock()
	if killing {
		g.signalAll(syscall.SIGKILL)
	}
}

// signalAll sends sig to the child's process group and to every
// descendant of the guard.
func (g *guard) signalAll(sig syscall.Signal) {
	g.mu.Lock()
	child := g.child
	g.mu.Unlock()
	if child > 0 {
		_ = syscall.Kill(-child, sig)
	}
	for _, pid := range Descendants(g.self) {
		_ = syscall.Kill(pid, sig)
	}
}
