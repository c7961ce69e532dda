package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/events"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReplayCommandOutsideRepo(t *testing.T) {
	code, _, stderr := runCLI(t, "", "replay", "--path", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "not inside a git repository") || !strings.Contains(stderr, "--file") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
}

func TestReplayCommandNothingRecorded(t *testing.T) {
	repo := gitRepo(t)
	code, out, stderr := runCLI(t, "", "replay", "--path", repo)
	if code != 0 || out != "no conversation events. (nothing recorded yet)\n" {
		t.Fatalf("code %d, out %q, stderr %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, "", "replay", "--path", repo, "--json")
	var doc struct {
		Entries []events.Event
		Summary struct{ Total int }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Summary.Total != 0 || doc.Entries == nil {
		t.Fatalf("code %d, json %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(repo, ".ai-session")); !os.IsNotExist(err) {
		t.Errorf("replay created .ai-session (stat err %v); it must be read-only", err)
	}
}

func TestReplayCommandReadsRepoLog(t *testing.T) {
	repo := gitRepo(t)
	os.Mkdir(filepath.Join(repo, ".ai-session"), 0o700)
	l, err := events.OpenLog(filepath.Join(repo, ".ai-session", "conversation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l.Append(events.New("s1", events.RoleUser, events.KindMessage, "hello"))
	l.Append(events.New("s1", events.RoleClaude, events.KindPlan, "planned"))
	l.Close()
	sub := filepath.Join(repo, "a", "b")
	os.MkdirAll(sub, 0o755)
	code, out, stderr := runCLI(t, "", "replay", "--path", sub, "--kind", "plan")
	if code != 0 || !strings.HasPrefix(out, "1. [") || !strings.Contains(out, "claude plan: planned") || strings.Contains(out, "hello") {
		t.Fatalf("code %d, out %q, stderr %q", code, out, stderr)
	}
	if !strings.Contains(out, "\n1 event; roles {claude: 1}; kinds {plan: 1}\n") {
		t.Errorf("footer missing: %q", out)
	}
}

func TestReplayCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--file", filepath.Join(dir, "none.jsonl")}, 1, "no conversation log"},
		{[]string{"--file", dir}, 1, "is a directory"},
		{[]string{"--file", "x", "--limit", "-3"}, 2, "--limit"},
		{[]string{"--file", "x", "--kind", "bogus"}, 2, "unknown kind"},
		{[]string{"--file", "x", "--since", "soon"}, 2, "--since"},
		{[]string{"--file", "x", "--nope"}, 2, "unknown flag"},
		{[]string{"--file", "x", "extra"}, 2, "no arguments"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"replay"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("replay %v: code %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	code, out, _ := runCLI(t, "", "replay", "--help")
	if code != 0 || !strings.Contains(out, "--follow") || !strings.Contains(out, "--path") {
		t.Errorf("--help: code %d, %q", code, out)
	}
}

func TestReplayCommandFollowStopsOnCancel(t *testing.T) {
	old := events.FollowPoll
	events.FollowPoll = 20 * time.Millisecond
	t.Cleanup(func() { events.FollowPoll = old })
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	os.WriteFile(path, nil, 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replay", "--file", path, "--follow"}, &cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	}()
	l, _ := events.OpenLog(path)
	defer l.Close()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "late arrival") {
		if time.Now().After(deadline) {
			t.Fatalf("event not followed; output %q", out.String())
		}
		l.Append(events.New("s1", events.RoleUser, events.KindMessage, "late arrival"))
		time.Sleep(50 * time.Millisecond)
	}
	cancel() // what Ctrl-C does through main's signal context
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after cancel, stderr %q", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("replay --follow did not stop")
	}
}
