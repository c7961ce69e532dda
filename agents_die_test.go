//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// liveWith lists the live processes whose command line holds marker.
func liveWith(t *testing.T, marker string) []string {
	t.Helper()
	return agenttest.LiveProcesses(t, 0, marker)
}

// `relay-baton plan --yes` killed with SIGKILL while its agent runs: the
// agent (a script that ignores SIGTERM) and the grandchildren it started
// end too. The hang guard is a minute; the sleeps last five.
func TestKilledRelayBatonTakesAgentTree(t *testing.T) {
	dir := roomRepo(t)
	marker := "299.4321"
	fake := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\ntrap '' TERM\n" +
		"echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}'\n" +
		"sleep " + marker + " & sleep " + marker + " & wait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startRB(t, []string{agents.ClaudeBinEnv + "=" + fake}, nil, "plan", "--path", dir, "--yes", "add a flag")
	t.Cleanup(func() {
		for _, l := range liveWith(t, marker) {
			if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	hang := time.Now().Add(time.Minute)
	for len(liveWith(t, marker)) < 2 {
		select {
		case <-p.done:
			t.Fatalf("plan ended before its agent ran: exit %d\n%s\n%s", p.code, p.out.String(), p.err.String())
		default:
		}
		if time.Now().After(hang) {
			t.Fatal("the fake agent's sleeps never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	t0 := time.Now()
	for {
		left := liveWith(t, marker)
		if len(left) == 0 {
			break
		}
		if time.Since(t0) > time.Minute {
			t.Fatalf("a minute after SIGKILL of relay-baton its agent's tree still runs: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("SIGKILL of relay-baton plan -> agent tree gone in %v", time.Since(t0))
}
