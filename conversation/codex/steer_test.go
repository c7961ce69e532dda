//go:build linux || darwin

package codex

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

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
	if got := ControlSocket(); got != "" {
		t.Fatalf("found %s through a link", got)
	}
	os.Remove(filepath.Join(home, "app-server-control"))
	os.Mkdir(filepath.Join(home, "app-server-control"), 0o700)
	ln2, err := net.Listen("unix", filepath.Join(home, "app-server-control", "app-server-control.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if got := ControlSocket(); got == "" {
		t.Fatal("the daemon's own socket is not found")
	}
	os.Chmod(filepath.Join(home, "app-server-control"), 0o777)
	if got := ControlSocket(); got != "" {
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
	if got := ControlSocket(); got != real {
		t.Fatalf("ControlSocket = %q, want the link's target %s", got, real)
	}
	// The target's folder anyone may write to: refused.
	os.Chmod(daemon, 0o777)
	if got := ControlSocket(); got != "" {
		t.Fatalf("found %s in a folder anyone may write to", got)
	}
	os.Chmod(daemon, 0o700)
	// A link whose target is itself reached through a link: refused.
	hop := filepath.Join(testkit.ShortDir(t), "hop")
	os.Symlink(daemon, hop)
	os.Remove(link)
	os.Symlink(filepath.Join(hop, "d.sock"), link)
	if got := ControlSocket(); got != "" {
		t.Fatalf("followed a second link to %s", got)
	}
	// The link's own folder anyone may write to: refused.
	os.Remove(link)
	os.Symlink(real, link)
	os.Chmod(ctl, 0o777)
	if got := ControlSocket(); got != "" {
		t.Fatalf("read a link in a folder anyone may write to: %s", got)
	}
}
