package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/hook"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/hookinstall"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// This file holds the orchestrator lane's commands: send, targets, tail,
// wait and the Claude Code hooks (stop, wait, prompt-submit,
// session-start, install). The protocol itself lives in conversation/.

// --- shared helpers ---

func workspaceFlag(fs *pflag.FlagSet) *string {
	return fs.String("workspace", "", "the workspace (default: nearest folder with .claude/session-chat, else the git root, else the current folder)")
}

// warnPlanted prints, on standard error, what a clone committed into
// relay-baton's folders of ws (ignored) and any .gitignore there it could
// not repair.
func warnPlanted(inv *cli.Invocation, ws string) {
	for _, w := range conversation.PlantedWarnings(ws) {
		fmt.Fprintf(inv.IO.Err, "relay-baton: warning: %s\n", render.InertLine(w))
	}
}

// pickSession resolves --session / --lead to a session id.
func pickSession(ctx context.Context, ws, id string, lead bool) (string, error) {
	if id != "" && lead {
		return "", cli.Usagef("give --session or --lead, not both")
	}
	return sessionUsage(conversation.PickSession(ctx, ws, id))
}

// sessionUsage makes a session id that is malformed, or a prefix that
// matches no session or several, a usage error.
func sessionUsage(id string, err error) (string, error) {
	if errors.Is(err, conversation.ErrBadSessionID) || errors.Is(err, conversation.ErrUnknownSession) || errors.Is(err, conversation.ErrAmbiguousSession) {
		return "", &cli.UsageError{Msg: err.Error(), Hint: "relay-baton targets"}
	}
	return id, err
}

// --- send ---

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
		if note := conversation.LeadNote(ws, id); note != "" {
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

// --- targets ---

func runTargets(inv *cli.Invocation) error {
	fs := inv.Flags()
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "also list sessions that ended or whose process is unknown")
	everywhere := fs.Bool("everywhere", false, "list every running Claude Code session Claude Code knows (claude agents --json), whatever its folder")
	setLead := fs.String("set-lead", "", "mark session ID as the lead (\"none\" clears the mark)")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if *everywhere {
		return conversation.WriteEverywhere(inv.Ctx, inv.IO.Out, time.Now())
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	if *setLead != "" {
		id := *setLead
		if id == "none" {
			id = ""
		} else if id, err = sessionUsage(conversation.PickSession(inv.Ctx, ws, id)); err != nil {
			return err
		}
		running, err := conversation.MarkLead(ws, id)
		if err != nil {
			return &cli.UsageError{Msg: err.Error(), Hint: "relay-baton targets"}
		}
		if !running {
			fmt.Fprintf(inv.IO.Err, "relay-baton: note: session %s is not running in %s; it becomes the lead while it runs with the hooks installed (until then the most recently active running one is)\n", id, ws)
		}
	}
	warnPlanted(inv, ws)
	if note := conversation.NativeLaneNote(); note != "" {
		fmt.Fprintf(inv.IO.Err, "relay-baton: note: %s\n", note)
	}
	ts, err := conversation.ListTargetsContext(inv.Ctx, ws, *all)
	if err != nil {
		return err
	}
	if err := inv.Ctx.Err(); err != nil {
		return err // Ctrl-C while Claude Code's registry was read: the list is not whole
	}
	if *asJSON {
		if ts == nil {
			ts = []conversation.Target{}
		}
		return inv.PrintJSON(ts)
	}
	return view.TargetsReport(inv.IO.Out, ws, ts, *all, time.Now())
}

// --- tail ---

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

// --- wait (Monitor lane) ---

func runWait(inv *cli.Invocation) error {
	fs := inv.Flags()
	session := fs.String("session", "", "the session id, or a unique prefix of 8+ hex digits")
	once := fs.Bool("once", false, "exit after the first message")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if *session == "" {
		return &cli.UsageError{Msg: "wait needs --session ID", Hint: "relay-baton targets"}
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	id, err := sessionUsage(conversation.PickSession(inv.Ctx, ws, *session)) // --session is given: resolved, never the lead
	if err != nil {
		return err
	}
	s, err := conversation.OpenSession(ws, id)
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	if !s.ChatCapable() {
		return fmt.Errorf("session %s: %w", id, conversation.ErrNotChatReady)
	}
	// A reader that is gone must show as a failed write (the message goes
	// back to the inbox), not kill the process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	// Sanitized when a person reads it rather than the Monitor tool.
	return s.Monitor(inv.Ctx, *once, inv.IO.OutTTY, inv.IO.Out, inv.IO.Err)
}

// --- hooks (hook.Run: the runtime; the decisions are conversation's: HookStop, HookWait, ...) ---

func runHook(inv *cli.Invocation) error {
	subInv, err := inv.Subcommand(cli.HookSubcommands)
	if err != nil {
		return err
	}
	sub := strings.TrimPrefix(subInv.Cmd.Name, "hook ")
	if sub == "install" {
		return hookInstall(subInv)
	}
	fs := subInv.Flags()
	timeout := fs.Duration("timeout", hook.DefaultWaiterTimeout, "give up (exit 0, nothing claimed) after this long; keep it under the hook's timeout")
	if sub != "wait" {
		fs = subInv.Flags() // the other hooks take no flag
	}
	if err := subInv.Parse(fs); err != nil {
		// Exit 2 from an asyncRewake hook wakes the session with stderr as
		// a message: a bad flag must not reach the model. Exit 1 instead.
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s (try: relay-baton hook %s --help)", ue.Msg, sub)}
		}
		return err
	}
	woke, failed := hook.Run(inv.Ctx, sub, inv.IO.In, inv.IO.Out, inv.IO.Err, *timeout)
	switch {
	case woke:
		return &cli.ExitError{Code: 2}
	case failed != nil:
		// Exit 1, not 2: a non-blocking error Claude Code shows, not text
		// for the model.
		return &cli.ExitError{Code: 1, Err: failed}
	}
	return nil
}

func hookInstall(inv *cli.Invocation) error {
	fs := inv.Flags()
	scope := fs.String("scope", "project", "where: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	check := fs.Bool("check", false, "only report whether the hooks are installed and current (exit 1 if not)")
	uninstall := fs.Bool("uninstall", false, "remove relay-baton's hooks")
	waitTimeout := fs.Duration("wait-timeout", hook.DefaultWaitTimeout, "how long the idle-lane waiter stays armed after each turn (a claude -p stream-json session waits for it when its stdin closes)")
	agent := fs.String("agent", "claude", "claude (Claude Code settings) or codex (Codex hooks.json, default --scope user, plus Codex's hook trust)")
	form := fs.String("form", hookinstall.FormAuto, "Claude Code's hooks: exec (run without a shell; Claude Code 2.1.139 or later), shell (sh -c), or auto: exec when the claude on PATH (or $RELAY_BATON_CLAUDE) is new enough")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	if !fs.Changed("scope") {
		*scope = "" // the agent's default
	}
	if note := conversation.NativeLaneNote(); note != "" && !*check && !*uninstall {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("hook install: %s; nothing was installed (--check and --uninstall still work here)", note)}
	}
	current, err := hookinstall.Install(inv.Ctx, inv.IO.Out, hookinstall.Options{Agent: *agent,
		Workspace: ws, Scope: *scope, WaitTimeout: *waitTimeout, Check: *check, Uninstall: *uninstall, Form: *form})
	var ue *hookinstall.UsageError
	switch {
	case errors.As(err, &ue):
		return &cli.UsageError{Msg: ue.Msg, Hint: ue.Hint}
	case err != nil:
		return err
	case !current:
		return cli.ErrSilent // missing, out of date or untrusted (said)
	}
	return nil
}
