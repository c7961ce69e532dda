//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// `relay-baton plan` and `execute` (the built binary) killed with SIGKILL
// while the agent runs leave no process of the agent's tree: not the
// agent, not a grandchild that called setsid (a session of its own, out of
// the agent's process group), not one that double-forked (re-parented away
// from the agent); all ignore SIGTERM. The step folder execute made is
// removed by the next run that makes one. Hang guards are a minute; the
// sleeps last five.
func TestKilledRelayBatonTakesEscapedTree(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	if runtime.GOOS != "linux" {
		t.Skip("on macOS a setsid'd descendant outlives a SIGKILLed relay-baton (docs/platforms.md)")
	}
	bin := filepath.Join(t.TempDir(), "relay-baton")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"plan", []string{"plan", "--yes", "add a flag"}},
		{"execute-in-place", []string{"execute", "--yes", "--in-place"}}, // snapshots: step folders
		{"execute-worktree", []string{"execute", "--yes"}},               // the run's own worktree
	}
	for i, c := range cases {
		args := c.args
		t.Run(c.name, func(t *testing.T) {
			dir := roomRepo(t)
			if c.name == "execute-worktree" {
				// A worktree starts from HEAD: the repository needs a commit.
				for _, g := range [][]string{{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
					if out, err := exec.Command("git", append([]string{"-C", dir}, g...)...).CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v %s", g, err, out)
					}
				}
			}
			if err := os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte("# Plan\n## Steps\n1. add a flag in main.go\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			marker := fmt.Sprintf("299.86%d", i)
			fake := filepath.Join(t.TempDir(), "claude")
			script := "#!/bin/sh\ntrap '' TERM\n" +
				"echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}'\n" +
				"setsid -f sleep " + marker + "\n" + // a session of its own
				"( sleep " + marker + " & )\n" + // double-forked: re-parented
				"sleep " + marker + " & wait\n"
			if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append(args[:1:1], append([]string{"--path", dir}, args[1:]...)...)...)
			cmd.Env = append(os.Environ(), agents.ClaudeBinEnv+"="+fake, agents.CodexBinEnv+"="+fake, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+t.TempDir(), "CLAUDE_PROJECT_DIR=")
			var out, errb lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-done
				for _, l := range liveWith(t, marker) {
					if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			hang := time.Now().Add(time.Minute)
			for len(liveWith(t, marker)) < 3 {
				select {
				case <-done:
					t.Fatalf("%s ended before its agent ran:\n%s\n%s", args[0], out.String(), errb.String())
				default:
				}
				if time.Now().After(hang) {
					t.Fatalf("the fake agent's sleeps never started: %v", liveWith(t, marker))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			t0 := time.Now()
			for {
				left := liveWith(t, marker)
				if len(left) == 0 {
					break
				}
				if time.Since(t0) > time.Minute {
					t.Fatalf("a minute after SIGKILL of relay-baton %s its agent's tree still runs: %v", args[0], left)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("SIGKILL of relay-baton %s -> agent tree (setsid, double fork) gone in %v", args[0], time.Since(t0))
			if c.name != "execute-in-place" {
				return
			}
			steps, _ := filepath.Glob(filepath.Join(tmp, "relay-baton-step-*"))
			if len(steps) != 1 || !strings.Contains(steps[0], fmt.Sprintf("relay-baton-step-%d-", cmd.Process.Pid)) {
				t.Fatalf("step folders of the killed execute: %q", steps)
			}
			// The next execute (its agent fails at once) removes it.
			if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			next := exec.Command(bin, "execute", "--path", dir, "--yes", "--in-place")
			next.Env = cmd.Env
			next.CombinedOutput()
			if left, _ := filepath.Glob(filepath.Join(tmp, "relay-baton-step-*")); len(left) != 0 {
				t.Fatalf("the next execute left the dead run's step folder (and its own): %q", left)
			}
		})
	}
}
