//go:build unix

package agents_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// treeLeft lists the live processes of group pgid, or whose command line
// holds marker.
func treeLeft(t testing.TB, pgid int, marker string) []string {
	t.Helper()
	return agenttest.LiveProcesses(t, pgid, marker)
}

// startRunner starts the runner and waits for its agent's whole tree (the
// agent, its shell and two sleeps) to run.
func startRunner(t testing.TB) (*exec.Cmd, int, chan error) {
	t.Helper()
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), runnerEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := bufio.NewScanner(out)
	pgid := 0
	for pgid == 0 && lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "PGID "); ok {
			pgid, _ = strconv.Atoi(v)
		}
	}
	go func() {
		for lines.Scan() {
		}
		done <- cmd.Wait()
	}()
	if pgid == 0 {
		cmd.Process.Kill()
		t.Fatalf("the runner printed no PGID: %v", <-done)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
	hang := time.Now().Add(time.Minute) // a hang guard, not a bound
	for len(treeLeft(t, pgid, "300.5678")) < 4 {
		if time.Now().After(hang) {
			t.Fatalf("the agent's tree never ran: %v", treeLeft(t, pgid, "300.5678"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, pgid, done
}

// waitTreeGone waits for the tree to end; it fails after a minute.
func waitTreeGone(t testing.TB, pgid int) time.Duration {
	t.Helper()
	t0 := time.Now()
	for {
		left := treeLeft(t, pgid, "300.5678")
		if len(left) == 0 {
			return time.Since(t0)
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("the agent's tree outlived relay-baton by a minute: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A relay-baton killed with SIGKILL mid-run (no chance to clean up) takes
// its agent's whole tree with it, even an agent and grandchildren that
// ignore SIGTERM: the guard sees relay-baton's end and stops the group.
func TestKilledRunnerTakesTreeProbe(t *testing.T) {
	cmd, pgid, done := startRunner(t)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	d := waitTreeGone(t, pgid)
	t.Logf("SIGKILL of relay-baton -> the agent's tree gone in %v", d)
}

// SIGTERM to relay-baton ends the run and the whole tree, the agent
// ignoring SIGTERM included: SIGKILL follows after Grace. The documented
// contract is within a second; the figure is logged (and measured by
// BenchmarkTermEndsTree), the test only guards against a hang.
func TestTermRunnerEndsTreeProbe(t *testing.T) {
	cmd, pgid, done := startRunner(t)
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runner: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("relay-baton still running a minute after SIGTERM")
	}
	exited := time.Since(t0)
	waitTreeGone(t, pgid)
	t.Logf("SIGTERM -> relay-baton exited in %v, tree gone in %v", exited, time.Since(t0))
	if agents.Grace >= time.Second {
		t.Fatalf("Grace is %v: SIGTERM cannot end an agent that ignores it within a second", agents.Grace)
	}
}

// BenchmarkTermEndsTree measures SIGTERM to relay-baton -> relay-baton
// exited with its agent's whole tree gone (the agent ignoring SIGTERM).
// Reports the median as ms/term.
func BenchmarkTermEndsTree(b *testing.B) {
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cmd, pgid, done := startRunner(b)
		b.StartTimer()
		t0 := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
		waitTreeGone(b, pgid)
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms/term")
}
