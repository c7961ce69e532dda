package conversation

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

// The steer lane: a message for a Codex thread that is in a turn reaches
// the model at the turn's next tool boundary, through `turn/steer` of the
// app-server that runs the thread. The interactive TUI runs its threads on
// Codex's local app-server daemon (measured with 0.171.0), whose control
// socket is $CODEX_HOME/app-server-control/app-server-control.sock: the
// endpoint `codex --remote unix://` connects to. It speaks the app-server's
// JSON-RPC in WebSocket text frames. A `codex exec` run holds its
// app-server in-process: it has no socket, and its messages wait for the
// Stop hook as before.
//
//	initialize -> initialized -> thread/turns/list {threadId, limit 1}
//	   -> the turn in progress -> turn/steer {threadId, expectedTurnId, input}
//
// turn/steer fails when the turn is no longer the active one (it ended
// meanwhile): the message goes back to the inbox, first in line, for the
// queue lane or the Stop hook.

// LaneSteer is the lane of a message steered into a running Codex turn.
const LaneSteer Lane = "steer"

// steerTimeout bounds one steer (connect, three requests).
const steerTimeout = 15 * time.Second

// codexControlSocket is the control socket of Codex's local app-server
// daemon, or "" when there is none or it does not pass the checks. Codex
// makes $CODEX_HOME/app-server-control/app-server-control.sock a link to
// its socket in a folder of its own (/tmp/codex-daemon-<uid>/): that one
// link is read, never followed blindly. The link's folder must pass
// checkFolderPath and the link be the user's; its target, an absolute path
// with no link on it, must pass peer.CheckSocket (folders the user's or
// root's and writable by no one else, a socket of the user's). The target
// is what is dialled, so a link swapped later changes nothing.
func codexControlSocket() string {
	home := CodexHome()
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

// deliverCodex hands the oldest message of a Codex thread over at once
// when a lane can: the queue lane while the thread is idle, the steer lane
// while it is in a turn on the daemon. ok reports a delivery; otherwise the
// message stays queued for the Stop hook (or a later try).
func deliverCodex(ctx context.Context, s *Session) (ok bool, err error) {
	if s.codexTUIQuit() {
		return false, nil // nobody would see it: it waits for `codex resume`
	}
	if ok, err := deliverQueue(ctx, s); ok || err != nil {
		return ok, err
	}
	return deliverSteer(ctx, s)
}

// deliverSteer is the steer lane: when s is a Codex thread that is loaded
// and in a turn, and the daemon's control socket exists, it claims the
// oldest message (a hand-over claim, like the queue lane's) and steers its
// framed text into the turn. The rollout confirms the delivery. ok reports
// a delivery; a failure puts the message back into the inbox first in line.
func deliverSteer(ctx context.Context, s *Session) (ok bool, err error) {
	rollout, has, err := pendingForRollout(s)
	if err != nil || !has {
		return false, err
	}
	sock := codexControlSocket()
	if sock == "" || !codexTurn(rollout, time.Now()) || !CodexLoaded(s.ID) {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, steerTimeout)
	defer cancel()
	var res ClaimResult
	claim := func() (string, error) {
		var err error
		res, err = s.ClaimWith(LaneSteer, ClaimOptions{Handover: true, Transcript: rollout})
		if err != nil || !res.OK {
			return "", err
		}
		return s.Frame(res.Message), nil
	}
	err = steerCodex(ctx, sock, s.ID, claim)
	if !res.OK {
		// Not claimed: the thread is not on the daemon (a codex exec run),
		// its turn ended, or another lane took the message first.
		if err == nil || errors.Is(err, errNotSteerable) {
			return false, nil
		}
		return false, err
	}
	if err != nil {
		serr := fmt.Errorf("steering into Codex thread %s: %w", s.ID, err)
		if aerr := res.abandon(serr); aerr != nil {
			serr = fmt.Errorf("%w; putting message %s back into the inbox also failed: %v (its claim stays in claims/: the next lane settles it)", serr, res.Message.ID, aerr)
		}
		s.RecordError(serr)
		// A turn that ended between the check and the steer is not the
		// caller's error: the message waits for the next lane.
		if errors.Is(err, errNotSteerable) {
			return false, nil
		}
		return false, serr
	}
	_ = res.Delivered()
	return true, nil
}

// errNotSteerable: the thread is not loaded on the daemon, or has no turn
// in progress (any more).
var errNotSteerable = errors.New("no turn in progress on the app-server daemon")

// steerCodex connects to the app-server control socket and, when thread is
// loaded there with a turn in progress, calls claim for the text (a
// message claimed only then) and steers it into that turn. claim returning
// "" and no error means there was nothing to claim.
func steerCodex(ctx context.Context, sock, thread string, claim func() (string, error)) error {
	d := ws.Dialer{NetDial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		// The daemon's pid is recorded nowhere: the listening end must be a
		// process of this user.
		return peer.Dial(ctx, sock, 0, steerTimeout)
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
		return errNotSteerable
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
		return errNotSteerable
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
				return nil, fmt.Errorf("%w (%s: %s)", errNotSteerable, method, m.Error.Message)
			}
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	}
}
