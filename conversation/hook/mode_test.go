package hook

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// The argv of every mode measured with 2.1.328 (from /proc/$CLAUDE_PID/cmdline
// of a probe hook), and the variants of the flags.
func TestModeFromArgv(t *testing.T) {
	const bin = "/root/.cache/relay-baton/npm/node_modules/.bin/claude"
	cases := []struct {
		argv []string
		want SessionMode
	}{
		{[]string{bin, "--permission-mode", "default"}, ModeInteractive},
		{[]string{bin}, ModeInteractive},
		{[]string{bin, "explain -p to me"}, ModeInteractive},
		{[]string{bin, "--", "-p"}, ModeInteractive},
		{[]string{bin, "-p", "say hi"}, ModePrint},
		{[]string{bin, "--print", "say hi"}, ModePrint},
		{[]string{bin, "-cp", "say hi"}, ModePrint},
		{[]string{bin, "-pc"}, ModePrint},
		{[]string{bin, "-rp"}, ModeInteractive}, // --resume p
		{[]string{bin, "-p", "--output-format", "stream-json", "--verbose", "--resume", "90402641-34fa-401c-80a5-293b3fce9266", "--", "again"}, ModePrint},
		{[]string{bin, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "plan", "--disallowedTools", "Write,Edit,NotebookEdit", "--", "-p --input-format stream-json"}, ModePrint},
		{[]string{bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, ModeStreamJSON},
		{[]string{bin, "--input-format=stream-json", "--print"}, ModeStreamJSON},
		{[]string{bin, "-p", "--input-format", "text"}, ModePrint},
		{[]string{bin, "--input-format"}, ModeInteractive},
		{[]string{"/usr/bin/node", "--no-warnings", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-p", "hi"}, ModePrint},
		{[]string{"node", "-p", "/x/cli.js"}, ModeInteractive}, // node's own -p is not claude's
	}
	for _, c := range cases {
		if got := ModeFromArgv(c.argv); got != c.want {
			t.Errorf("ModeFromArgv(%q) = %s, want %s", c.argv[1:], got, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	const bin = "/opt/claude/bin/claude.exe"
	procs := &testkit.FakeProcs{Boot: "boot-1"}
	procs.Set(100, procfacts.Stat{PPID: 1, Comm: "claude", State: 'S', Start: 5000}, bin, "--permission-mode", "default")
	procs.Set(200, procfacts.Stat{PPID: 1, Comm: "claude", State: 'S', Start: 6000}, bin, "-p", "say hi")
	procs.Set(300, procfacts.Stat{PPID: 1, Comm: "claude", State: 'S', Start: 7000}, bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	procs.Set(400, procfacts.Stat{PPID: 1, Comm: "claude", State: 'S', Start: 8000}, bin, "-p", "--resume", "abc", "--", "next")
	procs.Set(500, procfacts.Stat{PPID: 1, Comm: "claude", State: 'S', Start: 9000}) // argv unreadable
	procs.Set(601, procfacts.Stat{PPID: 300, Comm: "sh", State: 'S', Start: 9100}, "/bin/sh", "-c", "relay-baton hook stop")
	print := []string{"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=sdk-cli", "CLAUDE_CODE_SESSION_ATTENDED=0"}
	tui := []string{"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_CODE_SESSION_ATTENDED=1"}
	cases := []struct {
		name string
		env  []string
		ppid int
		want SessionMode
		pid  int
	}{
		{"interactive", append(tui, "CLAUDE_PID=100"), 0, ModeInteractive, 100},
		{"plain -p", append(print, "CLAUDE_PID=200"), 0, ModePrint, 200},
		{"-p stream-json", append(print, "CLAUDE_PID=300"), 0, ModeStreamJSON, 300},
		{"-p --resume", append(print, "CLAUDE_PID=400"), 0, ModePrint, 400},
		{"relay-baton's agent run", append(print, "CLAUDE_PID=300", agents.AgentRunEnv+"=1"), 0, ModeAgentRun, 0},
		{"agent run marker wins over the TUI", append(tui, "CLAUDE_PID=100", agents.AgentRunEnv+"=1"), 0, ModeAgentRun, 0},
		{"marker must be 1", append(tui, "CLAUDE_PID=100", agents.AgentRunEnv+"=0"), 0, ModeInteractive, 100},
		{"argv unreadable, print env", append(print, "CLAUDE_PID=500"), 0, ModePrint, 500},
		{"argv unreadable, TUI env", append(tui, "CLAUDE_PID=500"), 0, ModeInteractive, 500},
		{"no such process, print env", append(print, "CLAUDE_PID=999"), 0, ModePrint, 0},
		{"attended=0 alone", []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ATTENDED=0", "CLAUDE_PID=999"}, 0, ModePrint, 0},
		{"no CLAUDE_PID: the shell's parent", print, 601, ModeStreamJSON, 300},
		{"no CLAUDE_PID: the parent itself", print, 200, ModePrint, 200},
		{"run by hand", nil, 601, ModeManual, 0},
	}
	for _, c := range cases {
		h := Detect(envOf(c.env...), procs, c.ppid)
		if h.Mode != c.want || h.Process.PID != c.pid || h.Why == "" {
			t.Errorf("%s: %+v, want mode %s pid %d", c.name, h, c.want, c.pid)
		}
		if h.Process.PID != 0 && (h.Process.BootID != "boot-1" || h.Process.Start == 0) {
			t.Errorf("%s: process %+v lacks its start time or boot", c.name, h.Process)
		}
		wantServe := c.want == ModeInteractive || c.want == ModeStreamJSON || c.want == ModeManual
		if h.Serves() != wantServe {
			t.Errorf("%s: Serves() = %v", c.name, h.Serves())
		}
	}
	// Off Linux: the environment decides, the pid is kept without a start time.
	other := &testkit.FakeProcs{NoProcs: true}
	if h := Detect(envOf(append(print, "CLAUDE_PID=300")...), other, 0); h.Mode != ModePrint || h.Process != (procfacts.Process{PID: 300}) {
		t.Errorf("unsupported platform, print env: %+v", h)
	}
	if h := Detect(envOf(append(tui, "CLAUDE_PID=100")...), other, 0); h.Mode != ModeInteractive {
		t.Errorf("unsupported platform, TUI env: %+v", h)
	}
}

func TestSkipDrainsThePayload(t *testing.T) {
	in := strings.NewReader(`{"session_id":"x"}`)
	if !Skip(Env{Mode: ModePrint}, in) || in.Len() != 0 {
		t.Fatalf("a print-mode hook must skip and drain its payload (left %d bytes)", in.Len())
	}
	in = strings.NewReader(`{}`)
	if Skip(Env{Mode: ModeInteractive}, in) || in.Len() != 2 {
		t.Fatal("an interactive session's hook must act, its payload unread")
	}
	if !Skip(Env{Mode: ModeAgentRun}, nil) {
		t.Fatal("agent run with no stdin")
	}
}

func TestProcessCheck(t *testing.T) {
	procs := &testkit.FakeProcs{Boot: "boot-1"}
	procs.Set(42, procfacts.Stat{State: 'S', Start: 1234})
	p := procfacts.Identify(procs, 42)
	if p != (procfacts.Process{PID: 42, Start: 1234, BootID: "boot-1"}) {
		t.Fatalf("Identify: %+v", p)
	}
	if got := p.Check(procs); got != procfacts.Live {
		t.Fatalf("running: %s", got)
	}
	procs.Set(42, procfacts.Stat{State: 'S', Start: 9999}) // the pid was reused
	if got := p.Check(procs); got != procfacts.Ended {
		t.Fatalf("pid reused: %s", got)
	}
	procs.Set(42, procfacts.Stat{State: 'Z', Start: 1234})
	if got := p.Check(procs); got != procfacts.Ended {
		t.Fatalf("zombie: %s", got)
	}
	if procfacts.Identify(procs, 42).Known() {
		t.Fatal("a zombie identified as a running process")
	}
	procs.Set(42, procfacts.Stat{State: 'S', Start: 1234})
	procs.Boot = "boot-2"
	if got := p.Check(procs); got != procfacts.Ended {
		t.Fatalf("after a reboot: %s", got)
	}
	procs.Boot = "boot-1"
	procs.Kill(42)
	if got := p.Check(procs); got != procfacts.Ended {
		t.Fatalf("gone: %s", got)
	}
	if got := (procfacts.Process{}).Check(procs); got != procfacts.Unknown {
		t.Fatalf("none recorded: %s", got)
	}
	if got := (procfacts.Process{PID: 42}).Check(&testkit.FakeProcs{NoProcs: true}); got != procfacts.Live {
		t.Fatalf("unsupported platform: %s", got)
	}
}

func TestWhileAlive(t *testing.T) {
	procs := &testkit.FakeProcs{}
	procs.Set(7, procfacts.Stat{State: 'S', Start: 1})
	ctx, cancel := procfacts.WhileAlive(context.Background(), procfacts.Identify(procs, 7), procs, 5*time.Millisecond)
	defer cancel()
	select {
	case <-ctx.Done():
		t.Fatal("ended while the process runs")
	case <-time.After(30 * time.Millisecond):
	}
	procs.Kill(7)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("still waiting after the session's process ended")
	}
	// No process known: only the parent context ends it.
	parent, stop := context.WithCancel(context.Background())
	ctx2, cancel2 := procfacts.WhileAlive(parent, procfacts.Process{}, procs, time.Millisecond)
	defer cancel2()
	stop()
	<-ctx2.Done()
}

// What the mode decision adds to every hook: reading the session's argv,
// stat and the boot id from the real /proc (this process stands for it).
func BenchmarkDetect(b *testing.B) {
	env := envOf("CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_PID="+strconv.Itoa(os.Getpid()))
	for b.Loop() {
		if h := Detect(env, procfacts.System, os.Getppid()); h.Mode == "" {
			b.Fatal("no mode")
		}
	}
}
