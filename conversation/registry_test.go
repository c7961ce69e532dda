//go:build linux || darwin

package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/prompts"
)

// fakeRegistry is Claude Code's registry as a test writes it (set), or an
// old claude's (old).
type fakeRegistry struct{ *testkit.FakeRegistry }

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{testkit.NewFakeRegistry(t, claudecode.ForgetRegistry)}
	t.Setenv(agents.ClaudeBinEnv, f.Bin)
	t.Setenv(claudecode.NoRegistryEnv, "")
	return f
}

func (f *fakeRegistry) set(ls ...claudecode.Session) {
	if ls == nil {
		ls = []claudecode.Session{}
	}
	f.Set(ls)
}

func (f *fakeRegistry) old() { f.Old() }

// privateTemp points os.TempDir at a fresh folder and makes its cc-socks/
// as Claude Code does (0700).
func privateTemp(t *testing.T) string {
	t.Helper()
	d := testkit.ShortDir(t)
	t.Setenv("TMPDIR", d)
	if err := os.Mkdir(filepath.Join(d, "cc-socks"), 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// A session Claude Code's registry lists is a target with no hook and no
// chat folder: its state words come from the registry, a message goes to
// <temp>/cc-socks/<pid>.sock served by that pid, the text previewed;
// an ended session (gone from the registry, its process ended)
// disappears.
func TestHooklessSessionFromTheRegistry(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	reg := newFakeRegistry(t)
	privateTemp(t)
	ws := t.TempDir()
	sess := claudecode.Session{Cwd: filepath.Join(ws, "sub"), Kind: "interactive", StartedAt: time.Now().UnixMilli(), SessionID: testSID, Name: "demo", Status: claudecode.StatusIdle}

	// The session's process serves its socket (made under another name:
	// its pid is known once it runs).
	pending := filepath.Join(filepath.Dir(claudecode.SocketPath(1)), "pending.sock")
	cmd := otherListener(t, pending)
	sess.PID = cmd.Process.Pid
	if err := os.Rename(pending, claudecode.SocketPath(sess.PID)); err != nil {
		t.Fatal(err)
	}
	reg.set(sess)

	ts, err := ListTargets(ws)
	if err != nil || len(ts) != 1 {
		t.Fatalf("targets %+v %v, want the listed session", ts, err)
	}
	tg := ts[0]
	if !tg.Listed || !tg.Socket || !tg.ChatCapable || !tg.Lead || tg.PID != sess.PID || tg.Status() != "idle, socket: at once" || tg.Delivers != "socket" {
		t.Fatalf("target %+v (%s)", tg, tg.Status())
	}
	if _, err := os.Stat(filepath.Join(ws, ".claude")); err == nil {
		t.Fatal("listing the targets wrote into the repository")
	}
	for status, want := range map[string]string{claudecode.StatusBusy: "busy, socket: between tool calls", claudecode.StatusWaiting: "waiting for its user (permission prompt)"} {
		w := sess
		w.Status = status
		if status == claudecode.StatusWaiting {
			w.WaitingFor = "permission prompt"
		}
		reg.set(w)
		if ts, _ := ListTargets(ws); len(ts) != 1 || ts[0].Status() != want {
			t.Fatalf("registry status %s: %+v", status, ts)
		}
	}
	reg.set(sess)

	r, err := Send(ws, testSID, "relay-baton room", "hookless?")
	if err != nil || r.SocketErr != nil {
		t.Fatalf("send: %v, socket: %v", err, r.SocketErr)
	}
	st, _ := r.Session.State(r.Message.ID)
	if st.Delivered == nil || st.Delivered.Lane != LaneSocket {
		t.Fatalf("state %+v", st)
	}
	eventually(t, "the post", func() bool {
		b, _ := os.ReadFile(pending + ".got")
		return strings.Contains(string(b), "hookless?")
	})
	b, _ := os.ReadFile(pending + ".got")
	var m struct {
		Message struct{ Content string } `json:"message"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	if want := prompts.FillFrame(Frame(Message{From: "relay-baton room", Text: "hookless?"}), r.Message.ID, r.Message.CreatedAt); m.Message.Content != want {
		t.Fatalf("posted %q, want %q", m.Message.Content, want)
	}

	// With hooks installed as well (a chat folder, socket.json): one row.
	if ts, _ := ListTargets(ws); len(ts) != 1 {
		t.Fatalf("%d rows for one session: %+v", len(ts), ts)
	}

	// Ended: gone from the registry, its process ended.
	cmd.Process.Kill()
	cmd.Wait()
	reg.set()
	if ts, _ := ListTargets(ws); len(ts) != 0 {
		t.Fatalf("an ended session is still a target: %+v", ts)
	}
}

// The socket at the registry's pid must be served by that pid.
func TestHooklessSocketOfAnotherProcessRefused(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	reg := newFakeRegistry(t)
	privateTemp(t)
	ws := t.TempDir()
	// A live process that serves nothing (the listener of another path).
	other := otherListener(t, filepath.Join(os.Getenv("TMPDIR"), "x.sock"))
	// This process serves the socket at the other's pid.
	ln := listenAt(t, claudecode.SocketPath(other.Process.Pid))
	defer ln.Close()
	reg.set(claudecode.Session{PID: other.Process.Pid, Cwd: ws, SessionID: testSID, Status: claudecode.StatusIdle})
	r, err := Send(ws, testSID, "room", "to whom?")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(r.SocketErr, peer.ErrNotSessions) {
		t.Fatalf("socket error %v, want the peer refused", r.SocketErr)
	}
}

// An old claude (no `agents --json`): the hook-registered sessions only,
// and one line that says why.
func TestOldClaudeFallsBackToTheHooks(t *testing.T) {
	reg := newFakeRegistry(t)
	reg.old()
	s := newSession(t)
	if _, err := ListTargets(s.Workspace); err != nil {
		t.Fatal(err)
	}
	note := claudecode.RegistryNote()
	if !strings.Contains(note, "has no `agents --json`") || !strings.Contains(note, "unknown option '--json'") || !strings.Contains(note, "relay-baton hook install") {
		t.Fatalf("note: %q", note)
	}
	t.Setenv(agents.ClaudeBinEnv, filepath.Join(t.TempDir(), "none"))
	claudecode.ForgetRegistry()
	if note := claudecode.RegistryNote(); !strings.Contains(note, "claude is not installed") {
		t.Fatalf("no claude: %q", note)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = fmt.Sprint

func listenAt(t *testing.T, p string) net.Listener {
	t.Helper()
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
