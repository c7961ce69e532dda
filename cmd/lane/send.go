package lane

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/workspace"
)

// Send is its command's row of the table (usage, help) and its Run.
var Send = &cli.Command{
	Entry: cli.Entry{Name: "send", Usage: "[--session ID | --lead] [--from NAME] [--follow] TEXT|-", Short: "Queue a chat message for a running Claude Code or Codex session"},
	Long: `Writes TEXT (or standard input, for "-") into the session's inbox
(.claude/session-chat/<sessionId>/inbox/). A Claude Code session receives it
through its messaging socket (no hooks needed): at once when idle, at its next
tool result when busy. With relay-baton's hooks installed, a message the socket
did not deliver comes at the next turn boundary (Stop hook) or, when idle, by
the asyncRewake waiter or an armed Monitor; an idle Codex session gets it by
codex queue. It counts as delivered once the session's transcript shows it.
Without --session, the
lead session of the workspace is used
(see 'relay-baton targets'). --follow waits for the delivery and prints the
session's reply from its transcript until the end of its turn.

Messages over 64 KB are refused.`,
	Run: runSend,
}

func runSend(inv *cli.Invocation) error {
	fs := inv.Flags()
	session := fs.String("session", "", "the session id, or a unique prefix of 8+ hex digits (default: the lead)")
	lead := fs.Bool("lead", false, "send to the workspace's lead session")
	from := fs.String("from", "relay-baton", "who the message is from")
	follow := fs.Bool("follow", false, "wait for the delivery and print the reply until the end of the turn")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &cli.UsageError{Msg: "send takes one TEXT argument (or - to read standard input)", Hint: `relay-baton send --lead "how is it going?"`}
	}
	text := fs.Arg(0)
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(inv.IO.In, conversation.MaxMessageBytes+1))
		if err != nil {
			return err
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return &cli.UsageError{Msg: "send: the message is empty", Hint: `relay-baton send --lead "how is it going?"`}
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	warnPlanted(inv, ws)
	id, err := pickSession(inv.Ctx, ws, *session, *lead)
	if err != nil {
		return err
	}
	if *session == "" {
		if note := view.LeadNote(ws, id); note != "" {
			fmt.Fprintf(inv.IO.Err, "relay-baton: note: %s\n", note)
		}
	}
	r, err := conversation.SendContext(inv.Ctx, ws, id, *from, text)
	if err != nil {
		return err
	}
	q, qerr := r.Session.Queue()
	depth := fmt.Sprintf(" (%d in the inbox)", q.Depth)
	switch {
	case qerr != nil:
		depth = ""
	case q.Depth == 0: // an armed waiter took it before the count: not "0 in the inbox"
		depth = " (already claimed by one of the session's lanes)"
	}
	fmt.Fprintf(inv.IO.Out, "queued %s for session %s%s\n", r.Message.ID, id, depth)
	if note := conversation.NativeLaneNote(); note != "" {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %s\n", note)
	}
	if r.QueueErr != nil {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %v\n", r.QueueErr)
	}
	if r.Behind != "" && (*follow || !r.Session.HooklessOnly()) {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: message %s waits until message %s is answered: the session gets one message per turn, each with its own reply\n", r.Message.ID, r.Behind)
	}
	if r.SocketErr != nil {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %s; it waits in the inbox for the session's Stop hook or its rewake waiter ('relay-baton targets' shows how it is reachable)\n", render.InertLine(r.SocketErr.Error()))
	}
	if !*follow {
		if r.Behind != "" && r.Session.HooklessOnly() {
			return awaitPost(inv, r, id)
		}
		return nil
	}
	res, err := conversation.Follow(inv.Ctx, r, conversation.WatchOptions{}, false, view.Follow(inv.IO.Out, inv.IO.Color))
	switch {
	case res.Outcome == conversation.Stopped:
		if res.StateErr == nil {
			fmt.Fprintf(inv.IO.Err, "relay-baton: stopped waiting: %s\n", followState(r.Message.ID, res.State))
		}
		return inv.Ctx.Err()
	case res.Outcome == conversation.SessionEnded && res.StateErr == nil && res.State.Queued:
		return fmt.Errorf("the session ended; message %s stays queued: it is delivered when the session runs again (`%s`)", r.Message.ID, r.Session.ResumeCommand())
	case res.Outcome == conversation.SessionEnded:
		return fmt.Errorf("the session ended before it answered message %s (relay-baton tail --session %s shows what it wrote)", r.Message.ID, id)
	case res.Outcome == conversation.Unconfirmed:
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("gave up following message %s: no lane's delivery shows in the session's transcript (%s); 'relay-baton targets' shows how the session is reachable", r.Message.ID, render.InertLine(res.Err.Error()))}
	case res.Outcome == conversation.Unreadable:
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("gave up following message %s: %s (relay-baton tail --session %s follows the session once its transcript shows)", r.Message.ID, render.InertLine(res.Err.Error()), id)}
	case res.Outcome == conversation.Cancelled:
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("message %s left the inbox without being delivered (cancelled elsewhere)", r.Message.ID)}
	}
	return err
}

// awaitPost is a plain send to a session no relay-baton hook reaches whose
// message waits behind an earlier one: no Stop hook will post it, so send
// stays until the earlier message is answered and posts it itself.
func awaitPost(inv *cli.Invocation, r conversation.Receipt, id string) error {
	fmt.Fprintf(inv.IO.Err, "relay-baton: message %s waits until message %s is answered (one message per turn, each with its own reply); no relay-baton hook reaches this session, so send stays to post it then (Ctrl-C leaves it in the inbox: the next 'relay-baton send' to the session posts it)\n", r.Message.ID, r.Behind)
	m, err := conversation.AwaitPost(inv.Ctx, r, 0)
	switch {
	case errors.Is(err, conversation.ErrSessionGone):
		return fmt.Errorf("the session ended; message %s stays queued: it is delivered when the session runs again (`%s`)", r.Message.ID, r.Session.ResumeCommand())
	case err != nil && inv.Ctx.Err() != nil:
		fmt.Fprintf(inv.IO.Err, "relay-baton: stopped waiting: message %s stays in the inbox; the next 'relay-baton send' to session %s posts it once message %s is answered\n", r.Message.ID, id, r.Behind)
		return inv.Ctx.Err()
	case err != nil:
		return err
	case m == nil:
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("message %s left the inbox without being delivered (cancelled elsewhere)", r.Message.ID)}
	}
	fmt.Fprintf(inv.IO.Out, "posted %s %s\n", r.Message.ID, conversation.ViaLane(m.Lane))
	return nil
}

// followState says where a followed message is when the follow stops:
// which lane delivered it, or that none has yet.
func followState(id string, st conversation.State) string {
	switch {
	case st.Queued:
		return fmt.Sprintf("message %s is in the inbox (%d ahead): no lane has delivered it yet", id, st.Ahead)
	case st.Delivered != nil && st.Delivered.Lane == conversation.LaneSocket && st.Unconfirmed:
		return fmt.Sprintf("message %s was posted to the session's messaging socket and its transcript has not shown it yet: not delivered yet (it goes back to the inbox for the hooks if it never shows)", id)
	case st.Delivered != nil && st.Incomplete:
		return fmt.Sprintf("message %s is being handed over %s: not delivered yet", id, conversation.ViaLane(st.Delivered.Lane))
	case st.Delivered != nil:
		return fmt.Sprintf("message %s was delivered %s", id, conversation.ViaLane(st.Delivered.Lane))
	}
	return fmt.Sprintf("message %s", id)
}
