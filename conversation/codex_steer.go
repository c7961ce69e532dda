package conversation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relay-baton/relay-baton/conversation/codex"
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
	sock := codex.ControlSocket()
	if sock == "" || !codex.InTurn(rollout, time.Now(), busyTTL) || !codex.Loaded(s.ID) {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, codex.SteerTimeout)
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
	err = codex.Steer(ctx, sock, s.ID, claim)
	if !res.OK {
		// Not claimed: the thread is not on the daemon (a codex exec run),
		// its turn ended, or another lane took the message first.
		if err == nil || errors.Is(err, codex.ErrNotSteerable) {
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
		if errors.Is(err, codex.ErrNotSteerable) {
			return false, nil
		}
		return false, serr
	}
	_ = res.Delivered()
	return true, nil
}
