//go:build unix

package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/prompts"
)

// previewOf is what the room's preview shows for text from from: the frame
// with the id and time as placeholders.
func previewOf(from, text string) string {
	return Frame(Message{From: from, Text: text})
}

// wantSent is the preview filled with what the queue assigned to m.
func wantSent(t *testing.T, m Message) string {
	t.Helper()
	p := previewOf(m.From, m.Text)
	if !strings.Contains(p, prompts.PlaceholderID) || !strings.Contains(p, prompts.PlaceholderTime) {
		t.Fatalf("the preview shows no placeholders:\n%s", p)
	}
	return prompts.FillFrame(p, m.ID, m.CreatedAt)
}

const laneText = "is the build green?\n\nsecond paragraph <id> <time>"

// Whatever lane delivers a message, the session receives the text the
// preview showed, byte for byte, the id and time filled in.
func TestEveryLaneDeliversThePreviewedText(t *testing.T) {
	t.Run("socket", func(t *testing.T) {
		s := newSession(t)
		sock := newFakeSocket(t)
		if err := s.RecordSocket(SocketInfo{Path: sock.path, Process: procfacts.ThisProcess()}); err != nil {
			t.Fatal(err)
		}
		r, err := Send(s.Workspace, s.ID, "relay-baton room", laneText)
		if err != nil || r.SocketErr != nil {
			t.Fatalf("send: %v, socket: %v", err, r.SocketErr)
		}
		lines := sock.next(t)
		var m struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
			t.Fatal(err)
		}
		if want := wantSent(t, r.Message); m.Message.Content != want {
			t.Errorf("posted:\n%q\npreviewed and filled:\n%q", m.Message.Content, want)
		}
	})
	t.Run("hook", func(t *testing.T) {
		s := newSession(t)
		manualHooks(t, s)
		t.Setenv(NoSocketEnv, "1")
		m, _ := s.Enqueue("relay-baton room", laneText)
		var out bytes.Buffer
		stopHook(payload(t, s, "Stop", map[string]any{"stop_hook_active": false}), &out)
		var block struct{ Reason string }
		if err := json.Unmarshal(out.Bytes(), &block); err != nil {
			t.Fatalf("%v: %q", err, out.String())
		}
		if want := wantSent(t, m); block.Reason != want {
			t.Errorf("Stop hook reason:\n%q\nwant:\n%q", block.Reason, want)
		}
	})
	t.Run("rewake", func(t *testing.T) {
		s := newSession(t)
		manualHooks(t, s)
		t.Setenv(NoSocketEnv, "1")
		m, _ := s.Enqueue("relay-baton room", laneText)
		var errOut bytes.Buffer
		if !waitHook(payload(t, s, "Stop", nil), &errOut, time.Minute) {
			t.Fatalf("the waiter did not wake: %q", errOut.String())
		}
		if got, want := strings.TrimSuffix(errOut.String(), "\n"), wantSent(t, m); got != want {
			t.Errorf("waiter wrote:\n%q\nwant:\n%q", got, want)
		}
	})
	t.Run("monitor", func(t *testing.T) {
		s := newSession(t)
		m, _ := s.Enqueue("relay-baton room", laneText)
		var out, errOut bytes.Buffer
		if err := s.Monitor(context.Background(), true, false, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSuffix(out.String(), "\n"), wantSent(t, m); got != want {
			t.Errorf("wait printed:\n%q\nwant:\n%q", got, want)
		}
	})
	t.Run("codex queue", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("CODEX_HOME", home)
		t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
		ws := t.TempDir()
		fakeCodexHome(t, home, tuiRollout, tuiThread, ws, 0)
		bin, log := fakeCodex(t, 0)
		t.Setenv(agents.CodexBinEnv, bin)
		defer holdWriterLock(t, home, tuiThread)()
		r, err := Send(ws, tuiThread, "relay-baton room", laneText)
		if err != nil || r.QueueErr != nil {
			t.Fatalf("send: %v %v", err, r.QueueErr)
		}
		args, _ := os.ReadFile(log)
		// The stand-in writes each argument on a line: the message is the
		// fifth and the last.
		a := strings.SplitN(strings.TrimSuffix(string(args), "\n"), "\n", 5)
		if len(a) != 5 || a[3] != "--message" {
			t.Fatalf("codex was run with:\n%s", args)
		}
		if want := wantSent(t, r.Message); a[4] != want {
			t.Errorf("codex queue --message:\n%q\nwant:\n%q", a[4], want)
		}
	})
}
