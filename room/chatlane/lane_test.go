package chatlane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/room/preview"
)

const sid = "0b7e3c1a-5d2f-4e8a-9c6b-1f2e3d4c5b6a"

// fakeRoom is what a Lane is given of the engine: what it says and logs
// is kept; its preview loop shows the preview and answers yes (or no).
type fakeRoom struct {
	mu       sync.Mutex
	said     strings.Builder
	logged   []events.Meta
	active   string
	decline  bool
	previews int
}

func (f *fakeRoom) say(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(&f.said, format+"\n", a...)
}

func (f *fakeRoom) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.said.String()
}

func (f *fakeRoom) deps() Deps {
	return Deps{
		Active: func() string { return f.active }, Activate: func() { f.active = AgentOrchestrator },
		Say: f.say, Print: func(s string) { f.say("%s", s) },
		Emit: func(_ events.Role, _ string, _ map[string]string, m events.Meta) string {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.logged = append(f.logged, m)
			return fmt.Sprintf("p%d", len(f.logged))
		},
		Confirm: func(c preview.Confirmation, text string) (string, error) {
			id, err := c.Preview(text, false)
			if err != nil {
				return text, err
			}
			f.previews++
			if f.decline {
				c.Declined(id, "declined")
				return text, preview.ErrDeclined
			}
			c.Confirmed(id)
			return text, nil
		},
		SavePrompt: func(string, string) (string, error) { return "", errors.New("no prompts folder") },
		AutoYes:    func() bool { return false },
		Notify:     func(time.Duration, string) {},
		Screen:     screen{},
	}
}

type screen struct{}

func (screen) BeginRun(string)          {}
func (screen) EndPulse()                {}
func (screen) Activity(events.Activity) {}
func (screen) Terminal(w io.Writer) *render.Terminal {
	return render.NewTerminal(w, false)
}

// newSession is a repository with a chat-capable Claude Code session
// that runs (as this test) and a lane for it.
func newSession(t *testing.T) (*Lane, *fakeRoom, *conversation.Session) {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // keep ~/.claude out of it
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	s, err := conversation.OpenSession(dir, sid)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), sid+".jsonl")
	if err := os.WriteFile(tr, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{TranscriptPath: tr, Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess())
	f := &fakeRoom{active: "claude"}
	l := New(dir, f.deps())
	l.Poll = 20 * time.Millisecond
	return l, f, s
}

// TestUseChatStopAndCancel: /agent orchestrator picks the lead and makes
// the lane active; a message is previewed, queued and followed; Ctrl-C
// stops the wait with the message queued, and /cancel takes it out.
func TestUseChatStopAndCancel(t *testing.T) {
	l, f, s := newSession(t)
	if err := l.Use(""); err != nil {
		t.Fatal(err)
	}
	if f.active != AgentOrchestrator || l.Session != sid || l.Target != "" || !strings.Contains(f.text(), "active agent: orchestrator → Claude Code session "+sid+" (the lead)") {
		t.Fatalf("after Use: active %s session %s target %q, said %s", f.active, l.Session, l.Target, f.text())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Chat(ctx, "how is it going?") }()
	testkit.Eventually(t, "the message queued", func() bool { q, _ := s.Queue(); return q.Depth > 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(l.Sent) != 1 || !strings.Contains(f.text(), "stopped waiting: message "+l.Sent[0].ID+" is still queued") {
		t.Fatalf("sent %v, said %s", l.Sent, f.text())
	}
	if got := l.CompleteQueued(nil); len(got) != 1 || got[0] != l.Sent[0].ID {
		t.Fatalf("/cancel completes %v", got)
	}
	if err := l.Cancel(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("still queued after /cancel: %+v", q)
	}
	var kinds []string
	for _, m := range f.logged {
		kinds = append(kinds, string(m.MetaKind()))
	}
	if got := strings.Join(kinds, ","); got != "status,prompt_preview,command,chat_sent,status" {
		t.Fatalf("logged %s", got)
	}
}

// TestDeclinedChatSendsNothing: a no to the preview queues nothing and
// says so.
func TestDeclinedChatSendsNothing(t *testing.T) {
	l, f, s := newSession(t)
	if err := l.Use(sid[:8]); err != nil || l.Target != sid {
		t.Fatalf("/target by prefix: %v %q", err, l.Target)
	}
	f.decline = true
	if err := l.Chat(context.Background(), "hello"); !errors.Is(err, preview.ErrDeclined) {
		t.Fatalf("declined chat: %v", err)
	}
	if q, _ := s.Queue(); q.Depth != 0 || len(l.Sent) != 0 || !strings.Contains(f.text(), "cancelled. nothing was sent.") {
		t.Fatalf("queue %+v, sent %v, said %s", q, l.Sent, f.text())
	}
}

// TestNothingChosenNothingSent: without a session chosen the lane's
// commands say what to do first.
func TestNothingChosenNothingSent(t *testing.T) {
	f := &fakeRoom{active: "claude"}
	l := New(t.TempDir(), f.deps())
	for name, err := range map[string]error{
		"chat":    l.Chat(context.Background(), "hi"),
		"target":  l.ChooseTarget(context.Background(), ""),
		"cancel":  l.Cancel(context.Background(), ""),
		"resend":  l.Resend(context.Background(), ""),
		"targets": l.ListTargets(context.Background(), "x"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if f.previews != 0 || len(f.logged) != 0 {
		t.Fatalf("previewed %d, logged %v", f.previews, f.logged)
	}
}
