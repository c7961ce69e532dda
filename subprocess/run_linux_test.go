//go:build !portable

package subprocess_test

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/subprocess"
)

// escapingScript starts, with SIGTERM ignored, a sleep in a session of its
// own (setsid) and a double-forked one (re-parented away from the child),
// both holding the output, says "started", then exits (or, stubborn,
// waits).
func escapingScript(marker string, stubborn bool) string {
	s := "trap '' TERM; setsid -f sleep " + marker + "; ( sleep " + marker + " & ); echo started"
	if stubborn {
		s += "; sleep " + marker
	}
	return s
}

// waitGone waits until no process with marker is left; it fails after a
// minute (a hang guard, not a bound).
func waitGone(t *testing.T, marker string) {
	t.Helper()
	hang := time.Now().Add(time.Minute)
	for {
		left := agenttest.LiveProcesses(t, 0, marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(hang) {
			for _, l := range left {
				if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			t.Fatalf("processes of the child's tree outlived the run: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// What a child leaves behind when it exits (a setsid'd and a double-forked
// process, both ignoring SIGTERM and holding the output) ends with the run:
// Run returns once they are gone, with the child's own exit status.
func TestExitedChildTakesEscapedTree(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	const marker = "301.1357"
	var out bytes.Buffer
	c := subprocess.Command("/bin/sh", "-c", escapingScript(marker, false)+"; exit 3")
	c.Stdout, c.Grace = &out, 100*time.Millisecond
	st, err := subprocess.Run(context.Background(), c)
	if st == nil || st.ExitCode() != 3 {
		t.Fatalf("state %v err %v", st, err)
	}
	if out.String() != "started\n" {
		t.Fatalf("output %q", out.String())
	}
	waitGone(t, marker)
}

// The same on cancellation of a child that ignores the request to end.
func TestCancelTakesEscapedTree(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	const marker = "301.2468"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	w := subprocess.Lines(1<<20, func(l []byte, _ int) {
		if string(l) == "started" {
			close(started)
		}
	})
	c := subprocess.Command("/bin/sh", "-c", escapingScript(marker, true))
	c.Stdout, c.Grace = w, 100*time.Millisecond
	done := make(chan *subprocess.Cmd, 1)
	var st interface{ ExitCode() int }
	go func() {
		s, _ := subprocess.Run(ctx, c)
		st = s
		done <- nil
	}()
	<-started
	for len(agenttest.LiveProcesses(t, 0, marker)) < 3 { // the two escaped sleeps and the child's own
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a bound
		t.Fatal("Run did not return a minute after cancellation")
	}
	w.Close()
	if st == nil || st.ExitCode() != -1 {
		t.Fatalf("a child killed: exit code %v, want -1 (killed by a signal)", st)
	}
	waitGone(t, marker)
}

// A program that cannot be started is an error of Run, as exec's.
func TestStartErrorThroughGuard(t *testing.T) {
	st, err := subprocess.Run(context.Background(), subprocess.Command("/nonexistent/prog"))
	if st != nil || err == nil || !strings.Contains(err.Error(), "/nonexistent/prog") {
		t.Fatalf("state %v err %v", st, err)
	}
	dir := t.TempDir()
	st, err = subprocess.Run(context.Background(), subprocess.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "exit 0"}, Dir: dir + "/gone"})
	if st != nil || err == nil {
		t.Fatalf("missing dir: state %v err %v", st, err)
	}
}

// The guard is in a process group of its own: Ctrl-C in the terminal
// (SIGINT to relay-baton's group) does not kill it, which would kill the
// child at once and let what it left behind go.
func TestGuardOutOfTerminalGroup(t *testing.T) {
	const marker = "301.3579"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	w := subprocess.Lines(1<<20, func(l []byte, _ int) {
		if string(l) == "started" {
			close(started)
		}
	})
	defer w.Close()
	c := subprocess.Command("/bin/sh", "-c", "echo started; exec sleep "+marker)
	c.Stdout = w
	done := make(chan struct{})
	go func() {
		subprocess.Run(ctx, c)
		close(done)
	}()
	<-started
	var guard []string
	for _, l := range agenttest.LiveProcesses(t, 0, marker) {
		if strings.Contains(l, "relay-baton-guard") {
			guard = strings.Fields(l)
		}
	}
	if guard == nil {
		t.Fatal("no guard process")
	}
	if pg := strconv.Itoa(syscall.Getpgrp()); guard[1] == pg {
		t.Fatalf("the guard %v is in relay-baton's process group %s", guard, pg)
	}
	cancel()
	<-done
	waitGone(t, marker)
}
