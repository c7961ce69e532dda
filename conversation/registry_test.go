//go:build linux || darwin

package conversation

import (
	"context"
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
	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/prompts"
)

// fakeRegistry is a `claude` stand-in whose `agents --json` prints what
// the test writes with set (and an old claude's error with old).
type fakeRegistry struct {
	t    *testing.T
	list string
}

func newFakeRegistry(t *testing.T) *fakeRegistry {
	t.Helper()
	d := t.TempDir()
	f := &fakeRegistry{t: t, list: filepath.Join(d, "list.json")}
	bin := filepath.Join(d, "claude")
	script := "#!/bin/sh\nif [ \"$1 $2\" = \"agents --json\" ]; then\n  if [ -f " + f.list + ".old ]; then echo \"error: unknown option '--json'\" >&2; exit 1; fi\n  cat " + f.list + "\n  exit 0\nfi\nexit 3\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(agents.ClaudeBinEnv, bin)
	t.Setenv(NoRegistryEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the remembered answer
	f.set()
	t.Cleanup(ForgetRegistry)
	return f
}

func (f *fakeRegistry) set(ls ...LiveSession) {
	f.t.Helper()
	if ls == nil {
		ls = []LiveSession{}
	}
	b, _ := json.Marshal(ls)
	if err := os.WriteFile(f.list, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	ForgetRegistry()
}

func (f *fakeRegistry) old() {
	os.WriteFile(f.list+".old", nil, 0o600)
	ForgetRegistry()
}

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
	sess := LiveSession{Cwd: filepath.Join(ws, "sub"), Kind: "interactive", StartedAt: time.Now().UnixMilli(), SessionID: testSID, Name: "demo", Status: StatusIdle}

	// The session's process serves its socket (made under another name:
	// its pid is known once it runs).
	pending := filepath.Join(filepath.Dir(claudeSocketPath(1)), "pending.sock")
	cmd := otherListener(t, pending)
	sess.PID = cmd.Process.Pid
	if err := os.Rename(pending, claudeSocketPath(sess.PID)); err != nil {
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
	for status, want := range map[string]string{StatusBusy: "busy, socket: between tool calls", StatusWaiting: "waiting for its user (permission prompt)"} {
		w := sess
		w.Status = status
		if status == StatusWaiting {
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
	ln := listenAt(t, claudeSocketPath(other.Process.Pid))
	defer ln.Close()
	reg.set(LiveSession{PID: other.Process.Pid, Cwd: ws, SessionID: testSID, Status: StatusIdle})
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
	note := RegistryNote()
	if !strings.Contains(note, "has no `agents --json`") || !strings.Contains(note, "unknown option '--json'") || !strings.Contains(note, "relay-baton hook install") {
		t.Fatalf("note: %q", note)
	}
	t.Setenv(agents.ClaudeBinEnv, filepath.Join(t.TempDir(), "none"))
	ForgetRegistry()
	if note := RegistryNote(); !strings.Contains(note, "claude is not installed") {
		t.Fatalf("no claude: %q", note)
	}
}

func TestParseRegistry(t *testing.T) {
	// As claude 2.1.332 printed it (a TUI at a permission prompt).
	got, err := parseRegistry([]byte(`[{"pid":4242,"cwd":"/w","kind":"interactive","startedAt":1764889200000,"sessionId":"0B7E2C1A-3F4D-4E5F-8A9B-0C1D2E3F4A5B","name":"demo","status":"waiting","waitingFor":"permission prompt"},{"pid":0,"sessionId":"x"}]`))
	if err != nil || len(got) != 1 || got[0].SessionID != testSID || got[0].WaitingFor != "permission prompt" || got[0].StartedAt != 1764889200000 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := parseRegistry([]byte("Usage: claude agents")); err == nil {
		t.Fatal("help text parsed as a list")
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

// targets --everywhere: every listed session, any folder, its cwd inert.
func TestWriteEverywhere(t *testing.T) {
	reg := newFakeRegistry(t)
	reg.set(LiveSession{PID: 42, Cwd: "/elsewhere/\x1b[2Jrepo", SessionID: testSID, Status: StatusWaiting, WaitingFor: "permission prompt"})
	var b strings.Builder
	if err := WriteEverywhere(context.Background(), &b, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{testSID, "waiting for its user (permission prompt)", "42", "/elsewhere/^[[2Jrepo", "relay-baton send --workspace CWD --session ID"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("an escape reached the output:\n%q", b.String())
	}
}

// A send to a session the last answer named, whose process still runs as
// then, needs no new call of claude; once that process ends, it does.
func TestRememberedRegistry(t *testing.T) {
	reg := newFakeRegistry(t)
	cmd := otherListener(t, filepath.Join(testkit.ShortDir(t), "x.sock"))
	reg.set(LiveSession{PID: cmd.Process.Pid, Cwd: "/w", SessionID: testSID, Status: StatusIdle})
	if _, err := Registry(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg.old() // claude answers no more
	if l, ok, err := registrySession(context.Background(), testSID); !ok || err != nil || l.PID != cmd.Process.Pid {
		t.Fatalf("remembered: %+v %v %v", l, ok, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, ok, err := registrySession(context.Background(), testSID); ok || !errors.Is(err, errNoRegistry) {
		t.Fatalf("an ended session answered from the file: %v %v", ok, err)
	}
	// A file planted in a repository is never read: only the user's cache folder.
	if p := registryFile(); !strings.HasPrefix(p, os.Getenv("XDG_CACHE_HOME")) {
		t.Fatalf("kept at %s", p)
	}
}

// A read of the registry ends with its caller's context, says so
// (errors.Is holds through errNoRegistry), and leaves no cached answer: the
// next caller reads the registry again.
func TestRegistryReadEndsWithContext(t *testing.T) {
	reg := newFakeRegistry(t)
	bin, started := testkit.HangingExe(t, "claude")
	t.Setenv(agents.ClaudeBinEnv, bin)
	ForgetRegistry()
	err := testkit.Cancelled(t, "the registry read", started, func(ctx context.Context) error {
		_, err := Registry(ctx)
		return err
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errNoRegistry) {
		t.Fatalf("registry error %v, want one wrapping errNoRegistry and context.Canceled", err)
	}
	// The same claude binary answering now: the cancellation was not kept.
	script := "#!/bin/sh\ncat " + reg.list + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]LiveSession{{PID: 42, Cwd: "/w", SessionID: testSID, Status: StatusIdle}})
	if err := os.WriteFile(reg.list, b, 0o600); err != nil { // not reg.set: the cache stays as the cancelled read left it
		t.Fatal(err)
	}
	if list, err := Registry(context.Background()); err != nil || len(list) != 1 {
		t.Fatalf("after a cancelled read: %+v %v, want the registry read again", list, err)
	}
}
