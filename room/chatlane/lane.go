package chatlane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/room/preview"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// This file is the orchestrator lane in the room: free text becomes a chat
// message for an already-running Claude Code session of the workspace,
// queued in its file inbox (conversation.Send) and delivered by the hooks;
// the room then follows the delivery and streams the session's reply from
// its transcript (conversation.Watch).

// AgentOrchestrator is the active-agent name of the orchestrator lane.
const AgentOrchestrator = "orchestrator"

// ChatFrom is the sender the room writes into its messages.
const ChatFrom = "relay-baton room"

// DefaultChatConfirm is how long a claimed message may take to show in the
// session's transcript before the room reports it unconfirmed.
const DefaultChatConfirm = 30 * time.Second

// maxSent bounds the messages the room remembers for /cancel and /resend.
const maxSent = 50

// Lane is the room's orchestrator lane: the session it talks to and the
// messages it queued. Like the engine that drives it, it is used by one
// turn at a time; the followers FollowReplies starts run beside it.
type Lane struct {
	Dir       string // the room's directory; the workspace is resolved from it
	Target    string // chosen with /target; "" = the workspace's lead
	Workspace string // the workspace in use
	Session   string // the session in use

	Sent        []Sent // oldest first
	Unconfirmed *Sent  // claimed but never seen in the transcript

	ConfirmWithin time.Duration // 0 = DefaultChatConfirm
	Poll          time.Duration // 0 = conversation's default

	d    Deps
	live *liveReplies // replies followed after Ctrl-C; nil outside the REPL
}

// Deps is what the lane takes from the engine that drives it.
type Deps struct {
	// Active is the room's active agent (named in errors); Activate
	// makes the orchestrator lane the active agent.
	Active   func() string
	Activate func()
	Say      func(format string, a ...any)
	Print    func(string) // text as it is
	// Emit logs an event and returns its id.
	Emit func(role events.Role, text string, refs map[string]string, meta events.Meta) string
	// Confirm is the room's one preview loop (preview.Screen.Confirm).
	Confirm func(c preview.Confirmation, text string) (string, error)
	// SavePrompt keeps a long message in .ai-session/prompts/ and returns
	// its path there.
	SavePrompt func(command, prompt string) (string, error)
	AutoYes    func() bool // --yes, logged with a confirmation
	// Notify tells the person a wait they may not watch ended.
	Notify func(took time.Duration, text string)
	Screen Screen
}

// Screen is where the lane renders a session's turn.
type Screen interface {
	// BeginRun starts the session's turn (its pulse); EndPulse ends it.
	BeginRun(agent string)
	EndPulse()
	// Activity renders one activity of the session.
	Activity(a events.Activity)
	// Terminal is a renderer to w with the screen's colour and width,
	// markdown on: a reply printed above the prompt.
	Terminal(w io.Writer) *render.Terminal
}

// New is a lane for the room in dir.
func New(dir string, d Deps) *Lane { return &Lane{Dir: dir, d: d} }

// Sent is a message the room queued.
type Sent struct {
	Workspace, Session, ID, Text string
}

// errNoChatSession is the message for a workspace with nothing to chat with.
func errNoChatSession(ws, active string) error {
	return fmt.Errorf("no chat-capable Claude Code or Codex session in %s: %s; the active agent stays %s", ws, noSessionAdvice(ws), active)
}

func (l *Lane) chatWorkspace() (string, error) {
	if l.Workspace != "" {
		return l.Workspace, nil
	}
	return workspace.Resolve(l.Dir)
}

// findTarget resolves want (a session id, a unique prefix of one, or ""
// / "lead" for the lead) among the workspace's sessions.
func (l *Lane) findTarget(ws, want string) (conversation.Target, error) {
	for _, w := range workspace.PlantedWarnings(ws) { // a clone's chat folders: ignored, said
		l.d.Say("warning: %s", w)
	}
	ts, err := conversation.ListTargets(ws)
	if err != nil {
		return conversation.Target{}, err
	}
	active := l.d.Active()
	if active == AgentOrchestrator {
		active += " (" + short8(l.Session) + ")"
	}
	found := view.FindTarget(ts, want)
	if want == "" || want == "lead" {
		switch {
		case len(found) == 0:
			return conversation.Target{}, errNoChatSession(ws, active)
		case !found[0].ChatCapable:
			return found[0], fmt.Errorf("the lead session %s is not chat-capable: it was started before `relay-baton hook install` (restart it), or pick another with /target <id> (/targets lists them)", found[0].SessionID)
		}
		return found[0], nil
	}
	switch {
	case len(found) == 0:
		if all, err := conversation.ListAllTargets(ws); err == nil {
			if m := view.FindTarget(all, want); len(m) > 0 {
				return conversation.Target{}, fmt.Errorf("%s %s is not running (%s): only running sessions can answer (/targets lists them)", targetLabel(m[0]), m[0].SessionID, m[0].State)
			}
		}
		return conversation.Target{}, fmt.Errorf("no Claude Code or Codex session %q in %s (/targets lists them)", want, ws)
	case len(found) > 1:
		return conversation.Target{}, fmt.Errorf("%q matches %d sessions: type more of the id (/targets lists them)", want, len(found))
	case !found[0].ChatCapable:
		return found[0], fmt.Errorf("session %s is not chat-capable: it was started before `relay-baton hook install`; restart it (or resume it) to reach it", found[0].SessionID)
	}
	return found[0], nil
}

// Use makes the orchestrator lane the active agent, talking to
// session target ("" = the workspace's lead).
func (l *Lane) Use(target string) error {
	ws, err := workspace.Resolve(l.Dir)
	if err != nil {
		return err
	}
	t, err := l.findTarget(ws, target)
	if err != nil {
		return err
	}
	if target != "" && target != "lead" {
		l.Target = t.SessionID
	} else {
		l.Target = ""
	}
	l.Workspace, l.Session = ws, t.SessionID
	l.d.Activate()
	s, _ := conversation.OpenSession(ws, t.SessionID)
	which := "chosen with /target"
	if l.Target == "" {
		which = "the lead"
	}
	l.d.Say("active agent: orchestrator → %s %s (%s)\n  %s", sessionLabel(s), t.SessionID, which, sessionState(s, time.Now()))
	if l.Target == "" {
		if note := view.LeadNote(ws, t.SessionID); note != "" {
			l.d.Say("note: %s", note)
		}
	}
	l.d.Emit(events.RoleRelayBaton, "active agent: orchestrator, session "+t.SessionID, nil,
		events.StatusMeta{Agent: AgentOrchestrator, Switched: true, Session: t.SessionID, Workspace: ws, Lead: events.Bool(t.Lead), FollowsLead: l.Target == ""})
	return nil
}

// sessionState says where a message sent now would go, and when.
func sessionState(s *conversation.Session, now time.Time) string { return s.Reachability(now) }

func short8(id string) string { return id[:min(8, len(id))] }

// ChooseTarget is /target: with no argument it names the target, else it
// makes the session named the target (Use).
func (l *Lane) ChooseTarget(_ context.Context, args string) error {
	f := strings.Fields(args)
	switch {
	case len(f) > 1:
		return fmt.Errorf("/target takes one session id (or lead), not %q", args)
	case len(f) == 0 && l.Session == "":
		return fmt.Errorf("no target yet: /target <sessionId|lead> (/targets lists the sessions)")
	case len(f) == 0:
		which := "chosen with /target"
		if l.Target == "" {
			which = "the lead"
		}
		s, _ := conversation.OpenSession(l.Workspace, l.Session)
		l.d.Say("target: %s %s (%s)", sessionLabel(s), l.Session, which)
		return nil
	}
	return l.Use(f[0])
}

// ListTargets is /targets: the workspace's sessions, the target marked.
func (l *Lane) ListTargets(_ context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/targets takes no arguments")
	}
	ws, err := workspace.Resolve(l.Dir)
	if err != nil {
		return err
	}
	ts, err := conversation.ListTargets(ws)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		l.d.Say("no Claude Code or Codex session running for %s: %s.", ws, noSessionAdvice(ws))
		return nil
	}
	var b strings.Builder
	current := ""
	if l.d.Active() == AgentOrchestrator {
		current = l.Session
	}
	view.Targets(&b, ts, view.TableOptions{Now: time.Now(), Current: current})
	b.WriteString("  * lead   > current target   (/target <id|lead> chooses; a session with CHAT no is reached after `relay-baton hook install` and its restart)\n")
	l.d.Print(b.String())
	return nil
}

// CompleteTargets completes /target: the workspace's session ids and "lead".
func (l *Lane) CompleteTargets(done []string) []string {
	if len(done) > 0 {
		return nil
	}
	out := []string{"lead"}
	ws, err := workspace.Resolve(l.Dir)
	if err != nil {
		return out
	}
	ts, _ := conversation.ListTargets(ws)
	for _, t := range ts {
		if t.ChatCapable {
			out = append(out, t.SessionID)
		}
	}
	return out
}

// CompleteQueued completes /cancel: the room's messages still in an inbox.
func (l *Lane) CompleteQueued(done []string) []string {
	if len(done) > 0 {
		return nil
	}
	var out []string
	for i := len(l.Sent) - 1; i >= 0; i-- {
		m := l.Sent[i]
		if s, err := conversation.OpenSession(m.Workspace, m.Session); err == nil {
			if st, err := s.State(m.ID); err == nil && st.Queued {
				out = append(out, m.ID)
			}
		}
	}
	return out
}

// lastSent is the id of the last message the room queued ("" for none).
func (l *Lane) lastSent() string {
	if len(l.Sent) == 0 {
		return ""
	}
	return l.Sent[len(l.Sent)-1].ID
}

func (l *Lane) remember(m Sent) {
	l.Sent = append(l.Sent, m)
	if len(l.Sent) > maxSent {
		l.Sent = l.Sent[len(l.Sent)-maxSent:]
	}
}

// Cancel is /cancel: it takes a message the room sent (the last one still
// queued, or the one named) out of its session's inbox.
func (l *Lane) Cancel(_ context.Context, args string) error {
	f := strings.Fields(args)
	if len(f) > 1 {
		return fmt.Errorf("/cancel takes one message id, not %q", args)
	}
	var m *Sent
	if len(f) == 0 {
		for i := len(l.Sent) - 1; i >= 0 && m == nil; i-- {
			c := l.Sent[i]
			if s, err := conversation.OpenSession(c.Workspace, c.Session); err == nil {
				if st, err := s.State(c.ID); err == nil && st.Queued {
					m = &c
				}
			}
		}
		if m == nil {
			return fmt.Errorf("none of the messages sent from this room is still queued (/cancel <id> removes another one)")
		}
	} else {
		for i := len(l.Sent) - 1; i >= 0; i-- {
			if l.Sent[i].ID == f[0] {
				c := l.Sent[i]
				m = &c
				break
			}
		}
		if m == nil {
			if l.Session == "" {
				return fmt.Errorf("message %s was not sent from this room: choose its session first (/target <id>)", f[0])
			}
			m = &Sent{Workspace: l.Workspace, Session: l.Session, ID: f[0]}
		}
	}
	s, err := conversation.OpenSession(m.Workspace, m.Session)
	if err != nil {
		return err
	}
	if err := s.Cancel(m.ID); err != nil {
		if errors.Is(err, conversation.ErrNotQueued) {
			if st, serr := s.State(m.ID); serr == nil && st.Delivered != nil {
				return fmt.Errorf("message %s was already delivered%s: it can no longer be cancelled", m.ID, deliveredWhen(st.Delivered))
			}
		}
		return err
	}
	l.d.Say("cancelled message %s: removed from the inbox of session %s; it will not be delivered.", m.ID, m.Session)
	l.d.Emit(events.RoleRelayBaton, fmt.Sprintf("chat message %s cancelled before delivery", m.ID),
		map[string]string{events.RefInbox: inboxRel(m.Session)}, events.StatusMeta{Agent: AgentOrchestrator, Session: m.Session, MessageID: m.ID, Cancelled: true})
	return nil
}

func deliveredWhen(m *conversation.Message) string {
	s := ""
	if m.Lane != "" {
		s += " via " + string(m.Lane)
	}
	if m.DeliveredAt != nil {
		s += " at " + m.DeliveredAt.Local().Format("15:04:05")
	}
	return s
}

// Resend is /resend: the last unconfirmed message back in the inbox (the
// same id), or queued again as a new message after its preview.
func (l *Lane) Resend(ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/resend takes no arguments (it re-sends the last unconfirmed message)")
	}
	m := l.Unconfirmed
	if m == nil {
		// A claim cut short (its claimer died before the hand-over) is
		// unconfirmed too.
		for i := len(l.Sent) - 1; i >= 0 && m == nil; i-- {
			c := l.Sent[i]
			if s, err := conversation.OpenSession(c.Workspace, c.Session); err == nil {
				if st, err := s.State(c.ID); err == nil && (st.Incomplete || st.Unconfirmed) {
					m = &c
				}
			}
		}
	}
	if m == nil {
		return fmt.Errorf("no unconfirmed message to resend (a message is unconfirmed when a lane claimed it but it never showed in the session's transcript)")
	}
	// The same message back in the inbox when its claim is not confirmed:
	// a copy would reach the session twice if the recovery also ran.
	if s, err := conversation.OpenSession(m.Workspace, m.Session); err == nil {
		requeued, confirmed, err := s.Requeue(m.ID)
		switch {
		case err != nil:
			return fmt.Errorf("put message %s back in the inbox: %w", m.ID, err)
		case confirmed:
			l.Unconfirmed = nil
			l.d.Say("message %s did reach session %s (its transcript shows the delivery): nothing resent.", m.ID, m.Session)
			return nil
		case requeued:
			l.Unconfirmed = nil
			l.d.Say("message %s is back in the inbox of session %s (same id): the next lane delivers it.", m.ID, m.Session)
			return nil
		}
	}
	l.d.Say("re-sending message %s to session %s as a new message.", m.ID, m.Session)
	before := l.lastSent()
	err := l.chatTo(ctx, m.Workspace, m.Session, m.Text, "resend of "+m.ID)
	if l.lastSent() != before && l.Unconfirmed == m {
		l.Unconfirmed = nil // queued again
	}
	return err
}

// Chat sends free text to the orchestrator session: preview, confirm,
// enqueue, then follow the delivery and the reply until the end of the
// session's turn (or Ctrl-C).
func (l *Lane) Chat(ctx context.Context, text string) error {
	if l.Session == "" {
		return fmt.Errorf("no orchestrator session chosen: /agent orchestrator or /target <id>")
	}
	return l.chatTo(ctx, l.Workspace, l.Session, text, "")
}

// inboxRel is a session's inbox folder relative to the workspace.
func inboxRel(session string) string {
	return filepath.ToSlash(filepath.Join(workspace.ChatDir, session, "inbox"))
}

// confirmChat previews the framed message and asks; it returns the
// (possibly edited) text, or ErrDeclined / ErrNeedYes.
func (l *Lane) confirmChat(s *conversation.Session, text, note string) (string, error) {
	text, err := l.d.Confirm(preview.Confirmation{
		Question: "send this? [y/N/e] ",
		Verb:     "sends",
		Noun:     "message",
		Preview: func(text string, edited bool) (string, error) {
			return l.previewChat(s, text, note, edited), nil
		},
		View: func(text string) { l.d.Say("%s", l.previewChatText(s, text, note, true)) },
		Card: func(text string) preview.Preview {
			return preview.Preview{Command: "chat", Agent: AgentOrchestrator, Text: l.previewChatText(s, text, note, false),
				All: l.previewChatText(s, text, note, true), Prompt: text, Lane: sessionLabel(s) + " " + s.ID + " (inbox " + inboxRel(s.ID) + "/)"}
		},
		Confirmed: func(previewID string) {
			l.d.Emit(events.RoleUser, "confirmed: send to orchestrator", nil,
				events.CommandMeta{Agent: AgentOrchestrator, Command: "chat", Session: s.ID, Confirmed: events.Bool(true), PreviewID: previewID, AutoYes: events.Bool(l.d.AutoYes())})
		},
		Declined: func(previewID, why string) { l.chatDeclined(s, previewID, why) },
	}, text)
	if err != nil {
		return "", err
	}
	return text, nil
}

func (l *Lane) chatDeclined(s *conversation.Session, previewID, why string) {
	l.d.Say("cancelled. nothing was sent.")
	l.d.Emit(events.RoleRelayBaton, "chat message not sent: "+why, nil,
		events.CommandMeta{Agent: AgentOrchestrator, Command: "chat", Session: s.ID, Confirmed: events.Bool(false), Sent: events.Bool(false), Reason: why, PreviewID: previewID})
}

// previewChat prints what would be queued, shortly (previewChatText),
// and logs a prompt_preview event.
func (l *Lane) previewChat(s *conversation.Session, text, note string, edited bool) string {
	framed := chatPreviewFrame(text)
	n := len([]rune(framed))
	l.d.Say("%s", l.previewChatText(s, text, note, false))
	meta := events.PromptPreviewMeta{Agent: AgentOrchestrator, Command: "chat", Session: s.ID, PromptChars: n, MessageChars: len(text), Edited: edited}
	var refs map[string]string
	if len(text) <= preview.InlineMax {
		meta.Prompt = text
	} else if rel, err := l.d.SavePrompt("chat", text); err == nil {
		refs = map[string]string{events.RefPrompt: rel}
	} else {
		meta.PromptError = err.Error()
	}
	return l.d.Emit(events.RoleRelayBaton,
		fmt.Sprintf("orchestrator chat to %s: %q (%d chars framed)", short8(s.ID), summary(text, 100), n), refs, meta)
}

// chatPreviewFrame is the text a chat preview shows: the frame every lane
// delivers, with the id and the time the queue assigns as placeholders
// (prompts.FillFrame fills them: the result is the text sent).
func chatPreviewFrame(text string) string {
	return conversation.Frame(conversation.Message{From: ChatFrom, Text: text})
}

// previewChatText is what a chat preview shows: the session, its inbox
// and state, and the framed text (its first lines, or all of it).
func (l *Lane) previewChatText(s *conversation.Session, text, note string, all bool) string {
	framed := chatPreviewFrame(text)
	var b strings.Builder
	fmt.Fprintf(&b, "preview: chat → orchestrator (%s %s)\n", sessionLabel(s), s.ID)
	if note != "" {
		fmt.Fprintf(&b, "  note:    %s\n", note)
	}
	fmt.Fprintf(&b, "  inbox:   %s/ in %s\n", inboxRel(s.ID), s.Workspace)
	fmt.Fprintf(&b, "  session: %s\n", sessionState(s, time.Now()))
	preview.PromptLines(&b, "framed text, the same by every lane (<id> and <time> are filled in when queued)", framed, text, len([]rune(framed)), all)
	return strings.TrimRight(b.String(), "\n")
}

func (l *Lane) chatTo(ctx context.Context, ws, sid, text, note string) error {
	text = strings.TrimSpace(text)
	s, err := conversation.OpenSession(ws, sid)
	if err != nil {
		return err
	}
	if s.ProcessEnded(procfacts.System) {
		return fmt.Errorf("%w; then /agent orchestrator (the lead) or /target <id> (/targets lists the running sessions)", conversation.EndedError(s))
	}
	if !s.ChatCapable() && !(s.IsCodex() && codex.Loaded(sid)) && !s.Listed() { // a loaded Codex thread: the queue lane; a listed Claude Code session: its socket
		return fmt.Errorf("session %s: %w", sid, conversation.ErrNotChatReady)
	}
	if len(text) > conversation.MaxMessageBytes {
		return fmt.Errorf("%d bytes: %w", len(text), conversation.ErrTooLarge)
	}
	if strings.IndexByte(text, 0) >= 0 {
		return conversation.ErrNUL
	}
	text, err = l.confirmChat(s, text, note)
	if err != nil {
		return err
	}
	r, err := conversation.SendContext(ctx, ws, sid, ChatFrom, text)
	if err != nil {
		return err
	}
	id := r.Message.ID
	sent := Sent{Workspace: ws, Session: sid, ID: id, Text: text}
	l.remember(sent)
	ahead := 0
	if st, err := s.State(id); err == nil && st.Queued {
		ahead = st.Ahead
	}
	inboxFile := filepath.ToSlash(filepath.Join(inboxRel(sid), r.Message.Inbox))
	refs := map[string]string{events.RefInbox: inboxFile}
	if r.TranscriptPath != "" {
		refs[events.RefTranscript] = r.TranscriptPath
	}
	l.d.Emit(events.RoleUser, summary(text, 2000), refs,
		events.ChatSentMeta{Agent: AgentOrchestrator, Session: sid, MessageID: id, Ahead: ahead, From: ChatFrom,
			Chars: len(text), TranscriptOffset: r.Offset, Workspace: ws})
	l.d.Say("queued (%d ahead): message %s for session %s · Ctrl-C stops waiting, the message stays queued", ahead, id, sid)
	return l.follow(ctx, r, sent, ahead)
}

// follow watches a sent message until the end of the session's turn that
// answers it, rendering the delivery and the reply.
func (l *Lane) follow(ctx context.Context, r conversation.Receipt, sent Sent, ahead int) error {
	s, id := r.Session, r.Message.ID
	began := time.Now()
	printedAhead := ahead
	started := false
	path := r.TranscriptPath
	confirm := l.ConfirmWithin
	if confirm <= 0 {
		confirm = DefaultChatConfirm
	}
	res, err := conversation.Follow(ctx, r, conversation.WatchOptions{ConfirmWithin: confirm, Poll: l.Poll}, true, func(u conversation.Update) {
		switch u.Kind {
		case conversation.UpdQueued:
			if u.Ahead != printedAhead {
				printedAhead = u.Ahead
				l.d.Say("queued (%d ahead)", u.Ahead)
			}
		case conversation.UpdDelivered:
			l.d.Say("delivered %s at %s", conversation.ViaLane(u.Lane), u.At.Local().Format("15:04:05"))
			latency := u.At.Sub(r.Message.CreatedAt).Milliseconds()
			l.d.Emit(events.RoleRelayBaton, fmt.Sprintf("chat message %s delivered via %s", id, u.Lane),
				map[string]string{events.RefDelivered: filepath.ToSlash(filepath.Join(workspace.ChatDir, s.ID, "delivered", id+".json"))},
				events.ChatDeliveredMeta{Agent: AgentOrchestrator, Session: s.ID, MessageID: id, Lane: string(u.Lane),
					At: u.At.UTC().Format(events.TimeFormat), SentAt: r.Message.CreatedAt.UTC().Format(events.TimeFormat),
					LatencyMs: &latency})
			l.d.Screen.BeginRun(AgentOrchestrator)
			started = true
		case conversation.UpdIncomplete, conversation.UpdRequeued, conversation.UpdDuplicate, conversation.UpdUnseen:
			l.d.Say("%v", u.Err)
		case conversation.UpdPosted:
			l.d.Say("posted to the session's messaging socket at %s; delivered once its transcript shows it", u.At.Local().Format("15:04:05"))
		case conversation.UpdActivity:
			l.d.Screen.Activity(u.Activity)
		}
	})
	if started {
		l.d.Screen.EndPulse()
	}
	if path == "" {
		path = conversation.LocateTranscript(s)
	}
	lane := res.Lane
	switch res.Outcome {
	case conversation.Replied:
		took := ""
		if !res.DeliveredAt.IsZero() {
			took = fmt.Sprintf(" · %s after delivery", time.Since(res.DeliveredAt).Round(100*time.Millisecond))
		}
		l.d.Say("orchestrator: ✓ end of turn%s", took)
		l.logReply(r, res, path, began)
		return nil
	case conversation.Cancelled:
		l.d.Say("message %s left the inbox without being delivered (cancelled elsewhere).", id)
		return nil
	case conversation.Unconfirmed:
		l.Unconfirmed = &sent
		l.d.Say("%v.\n  The session may have exited or be stuck; the message is not in its inbox any more. /resend queues it again.", res.Err)
		l.d.Emit(events.RoleRelayBaton, fmt.Sprintf("chat message %s delivered via %s but not confirmed in the transcript within %s", id, lane, confirm),
			nil, events.StatusMeta{Agent: AgentOrchestrator, Session: s.ID, MessageID: id, Lane: string(lane), Unconfirmed: true})
		return nil
	case conversation.Unreadable:
		l.d.Say("%v\n  (relay-baton tail --session %s follows the session once its transcript shows)", res.Err, s.ID)
		return nil
	case conversation.SessionEnded:
		l.d.Say("%s", sessionEndedText(s, id, res))
		return nil
	case conversation.Stopped:
		st := res.State
		switch {
		case res.StateErr == nil && st.Queued:
			l.d.Say("stopped waiting: message %s is still queued (%d ahead) and will be delivered at the session's next turn boundary; /cancel removes it.%s", id, st.Ahead, l.followLater(r, began))
		case res.StateErr == nil && st.Delivered != nil:
			when := deliveredWhen(st.Delivered)
			if !res.DeliveredAt.IsZero() {
				// The moment the transcript showed it (what "delivered
				// via ... at" said): a socket record's time is its post.
				when = fmt.Sprintf(" via %s at %s", res.Lane, res.DeliveredAt.Local().Format("15:04:05"))
			}
			l.d.Say("stopped waiting: message %s was delivered%s; the reply goes on in the session (relay-baton tail --session %s).%s", id, when, s.ID, l.followLater(r, began))
		default:
			l.d.Say("stopped waiting for message %s.", id)
		}
		return nil
	}
	return err
}

// logReply logs the reply res to message r as a chat_reply event (the
// event chat --resume counts as seen) and notifies.
func (l *Lane) logReply(r conversation.Receipt, res conversation.FollowResult, path string, began time.Time) {
	s, id := r.Session, r.Message.ID
	refs := map[string]string{}
	if path != "" {
		refs[events.RefTranscript] = path
	}
	outbox := false
	if _, ok := s.Reply(id); ok {
		outbox = true
		refs[events.RefOutbox] = filepath.ToSlash(filepath.Join(workspace.ChatDir, s.ID, "outbox", id+".json"))
	}
	text := summary(res.Reply, 1000)
	if text == "" {
		text = "(the session's turn ended without reply text)"
	}
	from, to := r.Offset, transcript.Size(path)
	l.d.Notify(time.Since(began), "session "+short8(s.ID)+" replied to message "+id)
	l.d.Emit(events.RoleOrchestrator, text, refs,
		events.ChatReplyMeta{Agent: AgentOrchestrator, Session: s.ID, MessageID: id, Lane: string(res.Lane), Chars: events.Int(len(res.Reply)),
			TranscriptFrom: &from, TranscriptTo: &to, Outbox: events.Bool(outbox)})
}

// summary shortens s to one line of at most n runes for event text.
var summary = render.Cut
