//go:build unix

package subprocess_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/subprocess"
)

func TestCombinedOutputAndExitError(t *testing.T) {
	out, err := subprocess.CombinedOutput(context.Background(), subprocess.Command("/bin/sh", "-c", "echo out; echo err >&2; exit 3"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("err %v", err)
	}
	if got := string(out); got != "out\nerr\n" {
		t.Fatalf("output %q", got)
	}
}

// A child that ignores the request to end is killed with its whole group,
// grandchildren included, once Grace has passed after cancellation; the
// lines it wrote are delivered.
func TestCancelKillsStubbornTree(t *testing.T) {
	const marker = "300.2468"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started, ready := make(chan int, 1), make(chan struct{})
	var lines []string
	w := subprocess.Lines(1<<20, func(l []byte, _ int) {
		lines = append(lines, string(l))
		if len(lines) == 1 {
			close(ready)
		}
	})
	done := make(chan error, 1)
	c := subprocess.Command("/bin/sh", "-c", "trap '' TERM; sleep "+marker+" & echo started; wait")
	c.Stdout, c.Grace, c.OnStart = w, 100*time.Millisecond, func(pid int) { started <- pid }
	go func() {
		_, err := subprocess.Run(ctx, c)
		done <- err
	}()
	pgid := <-started
	<-ready
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a bound
		t.Fatal("Run did not return a minute after cancellation")
	}
	w.Close()
	if len(lines) != 1 || lines[0] != "started" {
		t.Fatalf("lines %q", lines)
	}
	hang := time.Now().Add(time.Minute)
	for {
		left := agenttest.LiveProcesses(t, pgid, marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(hang) {
			t.Fatalf("the tree outlived the cancelled run: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
