package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/workspace"
)

// What the REPL's tests share: a scratch repository, a fake agent runner,
// an engine, and a screen that collects a pty's output.

// fakeRunner records requests; run decides each result.
type fakeRunner struct {
	mu  sync.Mutex
	ran []agents.Request
	run func(ctx context.Context, i int, req agents.Request) agents.Result
}

func (f *fakeRunner) Prepare(r agents.Request) (agents.Invocation, error) {
	return agents.Invocation{Path: "/fake/" + r.Agent, Argv: []string{r.Agent, "-p", r.Prompt}, Dir: r.Dir, Policy: "fake policy for " + string(r.Role), Stripped: []string{"ANTHROPIC_API_KEY"}}, nil
}

func (f *fakeRunner) Run(ctx context.Context, r agents.Request) agents.Result {
	f.mu.Lock()
	i := len(f.ran)
	f.ran = append(f.ran, r)
	f.mu.Unlock()
	if r.OnActivity != nil {
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActThinking})
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActTool, Tool: "Bash", Detail: "ls"})
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActText, Text: "working on it"})
	}
	res := agents.Result{Agent: r.Agent, ExitCode: 0, Duration: 5 * time.Millisecond, FinalText: "done"}
	if f.run != nil {
		res = f.run(ctx, i, r)
		res.Agent = r.Agent
	}
	return res
}

func (f *fakeRunner) runs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ran)
}

// newRepo makes a git repository with one commit.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("old\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "init")
	return dir
}

// newEngine opens a room on a new repository, printing to out, plain.
func newEngine(t *testing.T, out io.Writer) *room.Engine {
	t.Helper()
	e, err := room.New(room.Config{Dir: newRepo(t), Runner: &fakeRunner{}, Out: out, Getenv: func(string) string { return "" },
		Now: func() time.Time { return time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// readLog reads the repository's conversation log.
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

// kinds is the events' kinds, comma-separated.
func kinds(list []events.Event) string {
	var k []string
	for _, e := range list {
		k = append(k, string(e.Kind))
	}
	return strings.Join(k, ",")
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

// ptyGuard is how long until waits for the screen before it fails: a hang
// guard, never a bound.
const ptyGuard = 2 * time.Minute

// until waits for want to appear after the last match, fzf-style.
func (s *screen) until(tb testing.TB, want string) {
	tb.Helper()
	deadline := time.Now().Add(ptyGuard)
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

func (s *screen) send(tb testing.TB, keys string) {
	tb.Helper()
	if _, err := s.f.Write([]byte(keys)); err != nil {
		tb.Fatal(err)
	}
}

// simSID is a chat session's id.
const simSID = "0b7e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"

func appendTranscript(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for _, l := range lines {
		f.WriteString(l + "\n")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
