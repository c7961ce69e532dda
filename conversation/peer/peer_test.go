//go:build linux || darwin

package peer

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

// No link on a socket's path, no folder others may write to or another
// user owns; a root-owned sticky folder (/tmp) is fine.
func TestSocketPathChecks(t *testing.T) {
	d := testkit.ShortDir(t)
	real := filepath.Join(d, "real")
	os.Mkdir(real, 0o700)
	p := filepath.Join(real, "s.sock")
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckSocket(p); err != nil {
		t.Fatalf("a socket in a private folder under %s: %v", filepath.Dir(d), err)
	}
	link := filepath.Join(d, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := CheckSocket(filepath.Join(link, "s.sock")); !errors.Is(err, ErrNotSessions) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("through a linked folder: %v", err)
	}
	sockLink := filepath.Join(real, "l.sock")
	os.Symlink(p, sockLink)
	if err := CheckSocket(sockLink); !errors.Is(err, ErrNotSessions) {
		t.Errorf("a link to the socket: %v", err)
	}
	modes := []os.FileMode{0o770, 0o707}
	if os.Getuid() != 0 {
		modes = append(modes, 0o777|os.ModeSticky) // sticky is fine only in root's folders
	}
	for _, mode := range modes {
		os.Chmod(real, mode)
		if err := CheckSocket(p); !errors.Is(err, ErrNotSessions) || !strings.Contains(err.Error(), "writable by others") {
			t.Errorf("folder mode %s: %v", mode, err)
		}
	}
	os.Chmod(real, 0o700)
	if os.Getuid() == 0 {
		// Another user's folder (root can make one).
		os.Chown(real, 65534, 65534)
		if err := CheckSocket(p); !errors.Is(err, ErrNotSessions) || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Errorf("another user's folder: %v", err)
		}
		os.Chown(real, 0, 0)
		os.Lchown(p, 65534, 65534)
		if err := CheckSocket(p); !errors.Is(err, ErrNotSessions) {
			t.Errorf("another user's socket: %v", err)
		}
		os.Lchown(p, 0, 0)
	}
	if err := CheckSocket(filepath.Join(real, "none.sock")); !errors.Is(err, ErrRefused) {
		t.Errorf("no socket: %v", err)
	}
}
