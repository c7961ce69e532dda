// Package peer asks a socket who it is, for the socket lanes. A record that names a socket (socket.json, the
// registry's pid, Codex's control socket) is not believed on its word:
// before a message is posted, the path to the socket and the process
// listening at it are checked.
//
//   - The path: every directory from the root down to the socket's folder
//     is owned by the user or by root and writable by nobody else, except a
//     root-owned sticky folder (/tmp); no component is a symbolic link,
//     except a root-owned one directly under / (macOS's /tmp and /var,
//     links only root can plant). The socket itself is a socket (never
//     followed), owned by the user.
//   - The listening end: the credentials the kernel gives for the
//     connection (SO_PEERCRED on Linux, LOCAL_PEERPID and LOCAL_PEERCRED on
//     macOS, peer_linux.go / peer_darwin.go) name a process of the same
//     user and, when the session's pid is known, that very process. A
//     stand-in socket served by any other process is refused.
//
// Elsewhere (Windows' named pipes, other systems) the credentials cannot be
// asked: the socket lanes are not used there.
package peer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/safeio"
)

// ErrNotSessions: the socket's path or its listening end is not the session's.
var ErrNotSessions = errors.New("the socket is not the session's")

// ErrRefused: the socket could not be reached (a folder on its path
// unreadable, the connection refused).
var ErrRefused = errors.New("the messaging socket did not take the message")

// opErr is the innermost error of a net error, without the addresses
// (which repeat the path).
func opErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// CheckSocket checks the path to the socket at p (see above): nil when
// every folder on it is the user's or root's and writable by no one else,
// no link could redirect it, and p is a socket the user owns.
func CheckSocket(p string) error { return checkPath(p, true) }

// CheckFolder is CheckSocket for a folder: every folder on p and p
// itself owned by the user or root, writable by no one else, no link.
func CheckFolder(p string) error { return checkPath(p, false) }

func checkPath(p string, socket bool) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%w: %s is not an absolute path", ErrNotSessions, p)
	}
	p = filepath.Clean(p)
	uid := os.Getuid()
	parts := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	if err := checkPathDir(cur, uid); err != nil {
		return err
	}
	for i, name := range parts {
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrRefused, next, errors.Unwrap(err))
		}
		last := i == len(parts)-1
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Only a link root made at the top of the file system is
			// followed (macOS's /tmp -> private/tmp, /var -> private/var).
			if FileUID(fi) != 0 || i != 0 || !rootOnly(cur) || last {
				return fmt.Errorf("%w: %s is a symbolic link (a link on a socket's path could lead a message anywhere)", ErrNotSessions, next)
			}
			target, err := filepath.EvalSymlinks(next)
			if err != nil {
				return fmt.Errorf("%w: %s: %w", ErrNotSessions, next, err)
			}
			if err := checkRealDir(target, uid); err != nil {
				return err
			}
			cur = target
			continue
		}
		if last && socket {
			if fi.Mode().Type() != fs.ModeSocket {
				return fmt.Errorf("%w: %s is %s, not a socket", ErrRefused, next, safeio.FileKind(fi.Mode()))
			}
			if owner := FileUID(fi); owner >= 0 && owner != uid {
				return fmt.Errorf("%w: %s belongs to user %d, not to you (%d)", ErrNotSessions, next, owner, uid)
			}
			return nil
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is %s, not a folder", ErrNotSessions, next, safeio.FileKind(fi.Mode()))
		}
		if err := checkPathDir(next, uid); err != nil {
			return err
		}
		cur = next
	}
	return nil
}

// checkRealDir checks every folder of an already resolved path (a root
// link's target).
func checkRealDir(dir string, uid int) error {
	cur := string(filepath.Separator)
	for _, name := range strings.Split(strings.TrimPrefix(filepath.Clean(dir), string(filepath.Separator)), string(filepath.Separator)) {
		if name == "" {
			continue
		}
		cur = filepath.Join(cur, name)
		if err := checkPathDir(cur, uid); err != nil {
			return err
		}
	}
	return nil
}

// checkPathDir refuses a folder on a socket's path that another user owns
// or may write to (a root-owned sticky folder such as /tmp is fine: no one
// can replace what another made in it).
func checkPathDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, dir, errors.Unwrap(err))
	}
	owner := FileUID(fi)
	if owner < 0 {
		return nil // no owners on this system (never reached: the socket lanes are unix only)
	}
	if owner != uid && owner != 0 {
		return fmt.Errorf("%w: the folder %s on its path belongs to user %d, not to you or root", ErrNotSessions, dir, owner)
	}
	if fi.Mode().Perm()&0o022 != 0 && !(owner == 0 && fi.Mode()&fs.ModeSticky != 0) {
		return fmt.Errorf("%w: the folder %s on its path is writable by others (mode %s): fix it with chmod go-w", ErrNotSessions, dir, fi.Mode().Perm())
	}
	return nil
}

// rootOnly reports whether dir is owned by root and writable by no one else.
func rootOnly(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && FileUID(fi) == 0 && fi.Mode().Perm()&0o022 == 0
}

// Dial connects to the unix socket at p after CheckSocket, within
// timeout, and asks the kernel who listens there: a process of this user
// and, when wantPID is above 0, the process wantPID. Any other answer
// closes the connection: nothing has been written to it.
func Dial(ctx context.Context, p string, wantPID int, timeout time.Duration) (net.Conn, error) {
	if err := CheckSocket(p); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", p)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrRefused, p, opErr(err))
	}
	if err := checkPeer(c, p, wantPID); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkPeer compares the listening end's credentials with what is wanted.
func checkPeer(c net.Conn, p string, wantPID int) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("%w: %s is not a unix socket", ErrNotSessions, p)
	}
	pid, uid, err := peerCred(uc)
	if err != nil {
		return fmt.Errorf("%w: cannot ask %s who listens there: %w", ErrNotSessions, p, err)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("%w: %s is served by a process of user %d, not yours (%d)", ErrNotSessions, p, uid, os.Getuid())
	}
	if wantPID > 0 && pid != wantPID {
		return fmt.Errorf("%w: %s is served by process %d, not by the session's process %d", ErrNotSessions, p, pid, wantPID)
	}
	return nil
}
