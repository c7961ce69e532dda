package room

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/workspace"
)

// These tests drive the room through a real pseudo-terminal: the built
// relay-baton binary for what needs no agent, and RunREPL in-process with
// a fake runner for confirmation, editing and cancellation.

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	fakePath  string
	buildErr  error
)

func TestMain(m *testing.M) {
	// Runs' worktrees go to a folder of the tests', not the user's cache
	// (the binaries the PTY tests start inherit it).
	wt, err := os.MkdirTemp("", "room-worktrees-")
	if err != nil {
		panic(err)
	}
	os.Setenv("RELAY_BATON_WORKTREES", wt)
	code := m.Run()
	os.RemoveAll(wt)
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// binaries builds relay-baton and the fake agent once per test run.
func binaries(tb testing.TB) (string, string) {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "room-pty-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "relay-baton")
		fakePath = filepath.Join(buildDir, "fakeagent")
		for _, b := range [][2]string{{binPath, ".."}, {fakePath, "./testdata/fakeagent"}} {
			// The same build tags as this test binary: with -tags portable
			// the room's relay-baton must read process facts as the test does.
			out, err := exec.Command("go", "build", "-tags="+buildTags, "-o", b[0], b[1]).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath, fakePath
}

// screen collects everything written to a pty master.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark int
	f    *os.File
	done chan struct{}
}

func newScreen(f *os.File) *screen {
	s := &screen{f: f, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// until waits (up to 10 s) for want to appear after the last match,
// fzf-style.
func (s *screen) until(tb testing.TB, want string) {
	tb.Helper()
	s.untilWithin(tb, want, 10*time.Second)
}

// ptyGuard is the least untilWithin and wait give the room before they
// fail: hang guards, never bounds (a loaded machine may take many seconds
// to start a binary built with -race, or a CLI).
const ptyGuard = 2 * time.Minute

// untilWithin waits for want to appear after the last match, up to d or
// ptyGuard, whichever is longer (until uses 10 s; what waits on the real
// Claude Code needs longer).
func (s *screen) untilWithin(tb testing.TB, want string, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(max(d, ptyGuard))
	for time.Now().Before(deadline) {
		s.mu.Lock()
		all := s.buf.String()
		if i := strings.Index(all[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for %q; screen:\n%s", want, s.String())
}

// has reports whether want appeared after the last match (without waiting).
func (s *screen) has(want string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.buf.String()[s.mark:], want)
}

func (s *screen) send(tb testing.TB, keys string) {
	tb.Helper()
	if _, err := s.f.Write([]byte(keys)); err != nil {
		tb.Fatal(err)
	}
}

type proc struct {
	*screen
	cmd *exec.Cmd
}

func startBinary(tb testing.TB, dir string, env ...string) *proc {
	tb.Helper()
	return startBinaryArgs(tb, dir, []string{"chat"}, env...)
}

// startBinaryArgs starts relay-baton with args on a 160x50 pty.
func startBinaryArgs(tb testing.TB, dir string, args []string, env ...string) *proc {
	tb.Helper()
	bin, _ := binaries(tb)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "TERM=xterm"}, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		tb.Fatal(err)
	}
	p := &proc{screen: newScreen(f), cmd: cmd}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(tb testing.TB) int {
	tb.Helper()
	ch := make(chan error, 1)
	go func() { ch <- p.cmd.Wait() }()
	select {
	case err := <-ch:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			tb.Fatal(err)
		}
		return 0
	case <-time.After(ptyGuard):
		// SIGQUIT makes the Go runtime print every goroutine's stack to
		// the pty: the screen then shows where the room is stuck.
		p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
		}
		tb.Fatalf("the room did not exit; screen:\n%s", p.String())
	}
	return -1
}

var sgrRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestPTYTabCompletesContinue(t *testing.T) {
	dir := newRepo(t)
	p := startBinary(t, dir, "NO_COLOR=1")
	p.until(t, "claude› ")
	p.send(t, "/con\t")
	p.until(t, "/continue ")
	p.send(t, "\r")
	p.until(t, "no plan")
	p.until(t, "claude› ")
	p.send(t, "/agent c\t")
	time.Sleep(50 * time.Millisecond)
	p.send(t, "\t") // two candidates: the second Tab lists them
	p.until(t, "codex")
	p.send(t, "\x15\x04") // clear the line, then Ctrl-D
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestPTYNoColor(t *testing.T) {
	run := func(env ...string) string {
		dir := newRepo(t)
		p := startBinary(t, dir, env...)
		p.until(t, "claude›")
		p.send(t, "/help\r")
		p.until(t, "/exit")
		p.send(t, "/status\r")
		p.until(t, "last run")
		p.send(t, "/zzzz\r")
		p.until(t, "unknown command: /zzzz (try /help)")
		p.send(t, "/exit\r")
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return p.String()
	}
	if out := run("NO_COLOR=1"); sgrRE.MatchString(out) {
		t.Fatalf("NO_COLOR=1 output has colour codes: %q", sgrRE.FindAllString(out, 5))
	}
	// The same session on a colour terminal does colour: the check above is
	// not vacuous.
	if out := run(); !sgrRE.MatchString(out) {
		t.Fatalf("colour terminal output has no colour codes:\n%q", out)
	}
}

func TestPTYCtrlCTwiceLeaves(t *testing.T) {
	dir := newRepo(t)
	p := startBinary(t, dir, "NO_COLOR=1")
	p.until(t, "claude› ")
	p.send(t, "\x03")
	p.until(t, "press Ctrl-C again")
	p.until(t, "claude› ")
	p.send(t, "\x03")
	p.until(t, "bye.")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestPTYCtrlCOnTextThenErrorStaysOpen(t *testing.T) {
	dir := newRepo(t)
	p := startBinary(t, dir, "NO_COLOR=1")
	p.until(t, "claude› ")
	p.send(t, "some text\x03") // Ctrl-C on a non-empty line only clears it
	p.until(t, "claude› ")
	p.send(t, "/execute\r") // an error (no plan) keeps the room open
	p.until(t, "no plan")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.until(t, "bye.")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(p.String(), "press Ctrl-C again") {
		t.Fatal("Ctrl-C on a non-empty line warned about leaving")
	}
}

func TestPTYCtrlDLeaves(t *testing.T) {
	dir := newRepo(t)
	p := startBinary(t, dir, "NO_COLOR=1")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.until(t, "bye.")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ai-session", "room_history")); err != nil {
		t.Fatalf("history file: %v", err)
	}
}

func readLog(t *testing.T, dir string) []events.Event {
	t.Helper()
	f, err := os.Open(workspace.LogPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var list []events.Event
	events.Scan(f, func(e events.Event) error { list = append(list, e); return nil })
	return list
}

func TestPTYPlanAnsweredNoSpawnsNothing(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	pids := filepath.Join(t.TempDir(), "pids")
	p := startBinary(t, dir, "NO_COLOR=1", "RELAY_BATON_CLAUDE="+fake, "RELAY_BATON_CODEX="+fake, "FAKE_AGENT_PIDS="+pids)
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r")
	p.until(t, "cancelled. nothing ran.")
	p.send(t, "\x04")
	p.wait(t)
	if _, err := os.Stat(pids); err == nil {
		t.Fatal("the fake agent was started")
	}
	var got []string
	for _, e := range readLog(t, dir) {
		got = append(got, string(e.Kind))
		if e.Kind == events.KindAgentRun && metaMap(e.Meta)["confirmed"] != false {
			t.Fatalf("agent_run %+v", e)
		}
	}
	if !slices.Contains(got, "prompt_preview") || !slices.Contains(got, "agent_run") {
		t.Fatalf("events %v", got)
	}
}

func TestPTYCtrlCCancelsRunningAgentTree(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	pids := filepath.Join(t.TempDir(), "pids")
	p := startBinary(t, dir, "NO_COLOR=1", "RELAY_BATON_CLAUDE="+fake, "FAKE_AGENT_PIDS="+pids, "FAKE_AGENT_SLEEP=30")
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "Bash") // the tool-use line rendered from the activity stream
	p.send(t, "\x03")
	p.until(t, "cancelled")
	p.until(t, "claude› ")
	b, _ := os.ReadFile(pids)
	for _, s := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(s)
		deadline := time.Now().Add(ptyGuard) // a hang guard: the tree ends within Grace
		for pidAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d of the agent's tree is still alive", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	p.send(t, "\x04")
	p.wait(t)
}

// BenchmarkStartToPrompt measures the built binary from exec to its first
// prompt on a pseudo-terminal; it reports the median in ms.
func BenchmarkStartToPrompt(b *testing.B) {
	bin, _ := binaries(b)
	dir := b.TempDir()
	exec.Command("git", "-C", dir, "init", "-q").Run()
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "chat")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "TERM=xterm", "NO_COLOR=1"}
		f, err := pty.Start(cmd)
		if err != nil {
			b.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(got, []byte("claude› ")) {
			n, err := f.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				b.Fatalf("%v: %q", err, got)
			}
		}
		d = append(d, time.Since(start))
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		io.Discard.Write(got)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "ms-median")
}

func TestPTYEditViaScriptedEditor(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	script := filepath.Join(t.TempDir(), "ed")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf 'EDITED BY SCRIPT' > \"$1\"\n"), 0o755)
	p := startBinary(t, dir, "NO_COLOR=1", "RELAY_BATON_CLAUDE="+fake, "EDITOR="+script)
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "e\r")
	p.until(t, "│ EDITED BY SCRIPT")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "\r") // Enter alone means No
	p.until(t, "cancelled. nothing ran.")
	p.send(t, "\x04")
	p.wait(t)
	var previews int
	for _, e := range readLog(t, dir) {
		if e.Kind == events.KindPromptPreview {
			previews++
			if previews == 2 && (metaMap(e.Meta)["edited"] != true || metaMap(e.Meta)["prompt"] != "EDITED BY SCRIPT") {
				t.Fatalf("second preview %s", e.Meta)
			}
		}
	}
	if previews != 2 {
		t.Fatalf("%d previews", previews)
	}
}

func TestPTYSIGTERMLeaves(t *testing.T) {
	dir := newRepo(t)
	p := startBinary(t, dir, "NO_COLOR=1")
	p.until(t, "claude› ")
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// worktreesEnv passes the tests' worktrees folder to a relay-baton
// started with an environment of its own (its HOME is the repository:
// the default cache folder would be inside it, which runs refuses).
func worktreesEnv() string { return "RELAY_BATON_WORKTREES=" + os.Getenv("RELAY_BATON_WORKTREES") }
