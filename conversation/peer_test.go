//go:build linux || darwin

package conversation

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/procfacts"
)

// peerListenerMain is a stand-in socket served by another process: it
// listens at p, says "ready" on stdout, and appends what it is sent to
// p+".got".
func peerListenerMain(p string) int {
	ln, err := net.Listen("unix", p)
	if err != nil {
		return 1
	}
	os.Stdout.WriteString("ready\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		b, _ := io.ReadAll(c)
		c.Close()
		f, _ := os.OpenFile(p+".got", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		f.Write(b)
		f.Close()
	}
}

// otherListener starts peerListenerMain in a child process at p.
func otherListener(t *testing.T, p string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RB_PEER_LISTENER="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the stand-in listener did not start: %q", line)
	}
	return cmd
}

// A socket.json naming a live process (this one) and a socket another
// process serves is not the session's: nothing is posted, the message
// stays in the inbox for the hooks. Recorded with the listener's own
// process, the same socket takes it.
func TestSocketServedByAnotherProcessRefused(t *testing.T) {
	s := newSession(t)
	p := filepath.Join(testkit.ShortDir(t), "s.sock")
	cmd := otherListener(t, p)
	if err := s.RecordSocket(SocketInfo{Path: p, Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	r, err := Send(s.Workspace, s.ID, "room", "to the wrong socket?")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(r.SocketErr, peer.ErrNotSessions) || !strings.Contains(r.SocketErr.Error(), "not by the session's process") {
		t.Fatalf("socket error %v, want the peer refused", r.SocketErr)
	}
	if st, _ := s.State(r.Message.ID); !st.Queued {
		t.Fatalf("state %+v, want still queued", st)
	}
	if b, _ := os.ReadFile(p + ".got"); len(b) > 0 {
		t.Fatalf("the stand-in got %q", b)
	}
	// The same socket, recorded with the process that really serves it.
	if err := s.RecordSocket(SocketInfo{Path: p, Process: procfacts.Identify(procfacts.System, cmd.Process.Pid)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.deliverSocket(context.Background(), ""); n != 1 || err != nil {
		t.Fatalf("posted %d: %v", n, err)
	}
}

// Codex's control socket is found without following links.
func TestCodexControlSocketNoLinks(t *testing.T) {
	home := testkit.ShortDir(t)
	t.Setenv("CODEX_HOME", home)
	elsewhere := testkit.ShortDir(t)
	ln, err := net.Listen("unix", filepath.Join(elsewhere, "app-server-control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Symlink(elsewhere, filepath.Join(home, "app-server-control")); err != nil {
		t.Fatal(err)
	}
	if got := codexControlSocket(); got != "" {
		t.Fatalf("found %s through a link", got)
	}
	os.Remove(filepath.Join(home, "app-server-control"))
	os.Mkdir(filepath.Join(home, "app-server-control"), 0o700)
	ln2, err := net.Listen("unix", filepath.Join(home, "app-server-control", "app-server-control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if got := codexControlSocket(); got == "" {
		t.Fatal("the daemon's own socket is not found")
	}
	os.Chmod(filepath.Join(home, "app-server-control"), 0o777)
	if got := codexControlSocket(); got != "" {
		t.Fatalf("found %s in a folder anyone may write to", got)
	}
}

// Codex makes app-server-control.sock a link to its socket in a folder of
// its own: that link is read once, and its target must pass the checks.
func TestCodexControlSocketLinkAsCodexMakesIt(t *testing.T) {
	home := testkit.ShortDir(t)
	t.Setenv("CODEX_HOME", home)
	daemon := testkit.ShortDir(t)
	real := filepath.Join(daemon, "d.sock")
	ln, err := net.Listen("unix", real)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctl := filepath.Join(home, "app-server-control")
	os.Mkdir(ctl, 0o700)
	link := filepath.Join(ctl, "app-server-control.sock")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got := codexControlSocket(); got != real {
		t.Fatalf("codexControlSocket = %q, want the link's target %s", got, real)
	}
	// The target's folder anyone may write to: refused.
	os.Chmod(daemon, 0o777)
	if got := codexControlSocket(); got != "" {
		t.Fatalf("found %s in a folder anyone may write to", got)
	}
	os.Chmod(daemon, 0o700)
	// A link whose target is itself reached through a link: refused.
	hop := filepath.Join(testkit.ShortDir(t), "hop")
	os.Symlink(daemon, hop)
	os.Remove(link)
	os.Symlink(filepath.Join(hop, "d.sock"), link)
	if got := codexControlSocket(); got != "" {
		t.Fatalf("followed a second link to %s", got)
	}
	// The link's own folder anyone may write to: refused.
	os.Remove(link)
	os.Symlink(real, link)
	os.Chmod(ctl, 0o777)
	if got := codexControlSocket(); got != "" {
		t.Fatalf("read a link in a folder anyone may write to: %s", got)
	}
}
