package lane

import (
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// Tail is its command's row of the table (usage, help) and its Run.
var Tail = &cli.Command{
	Entry: cli.Entry{Name: "tail", Usage: "[--session ID] [--from-start] [--no-follow] [--json]", Short: "Stream a session's transcript as activity"},
	Long: `Follows a Claude Code session's transcript (located from its registration,
then ~/.claude/projects/<slug>/, then a scan), or a Codex thread's rollout
($CODEX_HOME/sessions/.../rollout-*-<thread id>.jsonl), and prints what the
session does: thinking, tool calls, reply text, end of turn, and chat
deliveries (with the message's text). It follows from the end of the file;
--from-start starts at its beginning. --no-follow stops at the end: alone, it
prints the session's last 3 turns (the one in progress included), with
--from-start the whole file. --json prints one activity object per line.`,
	Run: runTail,
}

func runTail(inv *cli.Invocation) error {
	fs := inv.Flags()
	session := fs.String("session", "", "the session id, or a unique prefix of 8+ hex digits (default: the lead)")
	fromStart := fs.Bool("from-start", false, "read the transcript from its start")
	noFollow := fs.Bool("no-follow", false, "stop at the end of the transcript")
	asJSON := fs.Bool("json", false, "print one activity JSON object per line")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("tail takes no arguments")
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	warnPlanted(inv, ws)
	id, err := pickSession(inv.Ctx, ws, *session, false)
	if err != nil {
		return err
	}
	path, err := conversation.TranscriptOf(ws, id)
	if err != nil {
		return err
	}
	var off int64
	if !*fromStart {
		off = transcript.Size(path)
	}
	out := render.NewStream(inv.IO.Out, inv.IO.Color, *asJSON)
	defer out.Close()
	lane := deliveredLane(ws, id)
	show := func(acts []events.Activity) {
		for _, a := range acts {
			lane(&a)
			out.Activity(events.RoleOrchestrator, a)
		}
	}
	onSkip := func(_ int64, why string) {
		out.Flush()
		fmt.Fprintf(inv.IO.Err, "relay-baton: %s\n", render.Inert(why))
	}
	if *noFollow && !*fromStart {
		return transcript.TailRecent(inv.Ctx, path, transcript.RecentTurns, onSkip, show)
	}
	return transcript.Tail(inv.Ctx, transcript.TailOptions{
		Path: path, Offset: off, Follow: !*noFollow,
		OnSkip: onSkip,
		OnActivity: func(_ int64, acts []events.Activity) bool {
			show(acts)
			if !*noFollow { // following: nothing waits in the buffer
				out.Flush()
			}
			return true
		},
	})
}

// deliveredLane names the lane of a chat message a Codex rollout shows as
// a user turn: the rollout cannot tell `codex queue` (an idle thread) from
// a steer into a running turn, so it says "queue" for both; the session's
// chat folder recorded which lane claimed the message. It returns the
// function that corrects an activity in place (the folder's word, when
// it has one).
func deliveredLane(ws, id string) func(*events.Activity) {
	s, err := conversation.OpenSession(ws, id)
	if err != nil {
		return func(*events.Activity) {}
	}
	return func(a *events.Activity) {
		if a.Kind != events.ActDelivered || a.Detail != transcript.DeliveredByQueue {
			return
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(a.Text), "[relay-baton chat message ")
		if !ok {
			return
		}
		msg, _, _ := strings.Cut(rest, " ")
		if st, err := s.State(msg); err == nil && st.Delivered != nil && st.Delivered.Lane != "" {
			a.Detail = string(st.Delivered.Lane)
		}
	}
}
