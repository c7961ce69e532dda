package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/relay-baton/relay-baton/conversation/peer"
)

// The steer lane's wire: the interactive TUI runs its threads on Codex's
// local app-server daemon (measured with 0.171.0), whose control socket is
// $CODEX_HOME/app-server-control/app-server-control.sock (ControlSocket):
// the endpoint `codex --remote unix://` connects to. It speaks the
// app-server's JSON-RPC in WebSocket text frames (Steer).

// SteerTimeout bounds one steer (connect, three requests).
const SteerTimeout = 15 * time.Second

// ControlSocket is the control socket of Codex's local app-server
// daemon, or "" when there is none or it does not pass the checks. Codex
// makes $CODEX_HOME/app-server-control/app-server-control.sock a link to
// its socket in a folder of its own (/tmp/codex-daemon-<uid>/): that one
// link is read, never followed blindly. The link's folder must pass
// checkFolderPath and the link be the user's; its target, an absolute path
// with no link on it, must pass peer.CheckSocket (folders the user's or
// root's and writable by no one else, a socket of the user's). The target
// is what is dialled, so a link swapped later changes nothing.
func ControlSocket() string {
	home := Home()
	if home == "" {
		return ""
	}
	p := filepath.Join(home, "app-server-control", "app-server-control.sock")
	if !filepath.IsAbs(p) {
		return ""
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if peer.CheckFolder(filepath.Dir(p)) != nil {
			return ""
		}
		if owner := peer.FileUID(fi); owner >= 0 && owner != os.Getuid() {
			return ""
		}
		target, err := os.Readlink(p)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	if peer.CheckSocket(p) != nil {
		return ""
	}
	return p
}

// ErrNotSteerable: the thread is not loaded on the daemon, or has no turn
// in progress (any more).
var ErrNotSteerable = errors.New("no turn in progress on the app-server daemon")

// Steer connects to the app-server control socket and, when thread is
// loaded there with a turn in progress, calls claim for the text (a
// message claimed only then) and steers it into that turn. claim returning
// "" and no error means there was nothing to claim.
func Steer(ctx context.Context, sock, thread string, claim func() (string, error)) error {
	d := ws.Dialer{NetDial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		// The daemon's pid is recorded nowhere: the listening end must be a
		// process of this user.
		return peer.Dial(ctx, sock, 0, SteerTimeout)
	}}
	conn, br, _, err := d.Dial(ctx, "ws://localhost/")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", sock, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var r io.Reader = conn
	if br != nil {
		r = br
	}
	c := &rpcConn{rw: struct {
		io.Reader
		io.Writer
	}{r, conn}}
	if _, err := c.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "relay-baton", "version": "1"}}); err != nil {
		return err
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "initialized"}); err != nil {
		return err
	}
	raw, err := c.call("thread/loaded/list", map[string]any{})
	if err != nil {
		return err
	}
	var loaded struct {
		Data []string `json:"data"`
	}
	if err := json.Unmarshal(raw, &loaded); err != nil {
		return fmt.Errorf("thread/loaded/list: unexpected answer: %w", err)
	}
	if !slices.Contains(loaded.Data, thread) {
		return ErrNotSteerable
	}
	raw, err = c.call("thread/turns/list", map[string]any{"threadId": thread, "limit": 1})
	if err != nil {
		return err
	}
	var turns struct {
		Data []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil {
		return fmt.Errorf("thread/turns/list: unexpected answer: %w", err)
	}
	if len(turns.Data) == 0 || turns.Data[0].Status != "inProgress" {
		return ErrNotSteerable
	}
	text, err := claim()
	if err != nil || text == "" {
		return err
	}
	_, err = c.call("turn/steer", map[string]any{
		"threadId":       thread,
		"expectedTurnId": turns.Data[0].ID,
		"input":          []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}},
	})
	return err
}

// rpcConn is JSON-RPC over WebSocket text frames (client side).
type rpcConn struct {
	rw     io.ReadWriter
	nextID int
}

func (c *rpcConn) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return wsutil.WriteClientText(c.rw, b)
}

// call sends one request and returns its result, skipping notifications.
func (c *rpcConn) call(method string, params any) (json.RawMessage, error) {
	c.nextID++
	id := c.nextID
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	for {
		b, op, err := wsutil.ReadServerData(c.rw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if op != ws.OpText {
			continue
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &m) != nil || m.ID == nil || *m.ID != id {
			continue // a notification, or another request's answer
		}
		if m.Error != nil {
			if method == "turn/steer" {
				return nil, fmt.Errorf("%w (%s: %s)", ErrNotSteerable, method, m.Error.Message)
			}
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	}
}
