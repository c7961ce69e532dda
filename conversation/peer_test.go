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
