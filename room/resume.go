package room

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/reports"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// DefaultRecap is how many turns `chat --resume` and /resume replay.
const DefaultRecap = 6

// MaxRecap is the most turns a resume recaps: --recap and /resume N take
// 1 to MaxRecap.
const MaxRecap = 200

// ResumeState is the room's state rebuilt from conversation.jsonl by
// ReadResume: what the last sessions left behind.
type ResumeState struct {
	Active     string // "" when the log never named one
	ActiveAt   time.Time
	ActiveFrom string // "/agent", "status", "ask"
	Target     string // the orchestrator session id, "" if none (or FollowsLead)
	// FollowsLead: the room last talked to the orchestrator as "the lead"
	// (no /target): a resume follows whichever session is the lead now.
	FollowsLead bool
	Plan        *PlanRecord      // the last plan.md written, per the log
	Loop        *LoopRecord      // an unfinished /continue loop, or nil
	Chats       []PendingChat    // chat messages sent without a recorded reply
	LastRun     *reports.LastRun // the last agent run that ran
	// Conversations are the agents' conversations the log says a run
	// used and no /new forgot, by agent.
	Conversations map[string]AgentConversation
	Recap         []events.Event
	Events        int          // events read
	Stats         events.Stats // lines read and skipped (damaged, too long)
	// Versions counts events written with another schema version, by
	// version; Unknown counts events skipped because their role or kind
	// is not one this build knows.
	Versions map[int]int
	Unknown  int
	BadMeta  int // events whose meta fields had unexpected types (those fields ignored)
	First    time.Time
	Last     time.Time
}

// PlanRecord is the last plan event that wrote plan.md.
type PlanRecord struct {
	At      time.Time
	Agent   string
	Text    string
	Missing []string
}

// LoopRecord is a /continue loop that did not finish: interrupted (no stop
// event), cancelled or stopped by an agent failure before its last step.
// A step has two halves, the executor's work then the planner's plan
// update: the loop resumes at the half it stopped in.
type LoopRecord struct {
	Max      int
	Done     int    // steps whose executor half ran (the last may have been cancelled or failed)
	Planned  int    // steps whose planner half updated plan.md (or began the next step)
	From     int    // the step to continue from
	Half     string // the half of From to continue with: "execute" or "plan"
	Reason   string // the stop reason, "" when the loop never recorded one
	StopHalf string // the half the stop event names ("" before halves were logged)
	At       time.Time
	Previous string // the outcome the next executor's prompt gets: the step before From's, or From's with Half "plan"
	Answer   string // with Half "plan": From's executor answer, as logged
}

// PendingChat is a chat message to the orchestrator with no chat_reply in
// the log. Resolve fills State, Ahead, Reply from the chat folder.
type PendingChat struct {
	Session     string
	MessageID   string
	Text        string
	SentAt      time.Time
	Delivered   bool // per the log
	Lane        string
	DeliveredAt time.Time
	Offset      int64 // the transcript's size when sent (meta.offset, optional)

	State string // after resolve: queued, delivered, replied, gone, unreadable
	Ahead int
	Reply string
	Err   error
}

// recapKind reports whether an event belongs in the recap: the turns, not
// the bookkeeping around them (previews, confirmations, status lines).
func recapKind(e *events.Event) bool {
	switch e.Kind {
	case events.KindPromptPreview, events.KindStatus, events.KindBudget:
		return false
	case events.KindCommand:
		m, _ := events.MetaOf[events.CommandMeta](e)
		return m.Confirmed == nil && m.Command != "resume"
	}
	return true
}

type resumeReader struct {
	rs      *ResumeState
	recap   *replay.Ring
	loopMax int // from the last typed /continue
	// resumeFrom is the step a resume offered to continue a loop from (and
	// resumeHalf its half); the confirmation that follows starts a loop
	// already that far.
	resumeFrom int
	resumeHalf string
	loop       *LoopRecord
	stepOut    map[int]string
	answers    map[int]string // executor answers by step, for a planner half
	chats      map[string]*PendingChat
	order      []string
}

// newResumeReader is a reader at the top of a log, every map of its state
// made: ReadResume and the serve page's View (view.go) both start here, so
// an event one of them can take the other can too.
func newResumeReader() *resumeReader {
	rs := &ResumeState{Versions: map[int]int{}, Conversations: map[string]AgentConversation{}}
	return &resumeReader{rs: rs, stepOut: map[int]string{}, answers: map[int]string{}, chats: map[string]*PendingChat{}}
}

// ReadResume streams the log at path (never holding more than the recap
// and the pending chat messages) and rebuilds the room's state. A missing
// log gives a fresh state. Damaged lines and events this build does not
// understand are skipped and counted.
func ReadResume(path string, recap int) (*ResumeState, error) {
	r := newResumeReader()
	rs := r.rs
	if recap > 0 {
		r.recap = replay.NewRing(recap)
	}
	st, err := events.ReadFile(path, r.take)
	rs.Stats = st
	if err != nil && !errors.Is(err, events.ErrNoLog) {
		return rs, err
	}
	if r.recap != nil {
		r.recap.Each(func(e *events.Event) { rs.Recap = append(rs.Recap, *e) })
	}
	if l := r.loop; l != nil && (l.Reason == "" || l.Reason == string(StopCancelled) || l.Reason == string(StopFailure)) {
		switch {
		case l.Reason != "" && l.StopHalf == halfPlan:
			l.From, l.Half = max(1, l.Done), halfPlan // redo the plan update that was cancelled or failed
		case l.Reason != "":
			l.From, l.Half = max(1, l.Done), halfExecute // redo the step that was cancelled or failed
		case l.Planned < l.Done:
			l.From, l.Half = l.Done, halfPlan // the step ran; its plan update did not
		default:
			l.From, l.Half = l.Done+1, halfExecute
		}
		// The last step has no plan update.
		if l.From <= l.Max && !(l.Half == halfPlan && l.From >= l.Max) {
			l.Previous = r.stepOut[l.From-1]
			if l.Half == halfPlan {
				// The plan update reads From's answer; the executor after it
				// gets From's outcome.
				l.Previous, l.Answer = r.stepOut[l.From], r.answers[l.From]
			}
			rs.Loop = l
		}
	}
	for _, id := range r.order {
		if c := r.chats[id]; c != nil {
			rs.Chats = append(rs.Chats, *c)
		}
	}
	return rs, nil
}

// meta decodes e's typed meta, counting a field of the wrong type in bad
// (the other fields are still read).
func meta[T events.Meta](e *events.Event, bad *bool) T {
	m, err := events.MetaOf[T](e)
	if err != nil {
		*bad = true
	}
	return m
}

// switchedAgent reports whether a status event says the room's agent
// changed (an /agent switch or a resume). Logs written before
// StatusMeta.Switched existed say it only in the text.
func switchedAgent(e *events.Event, m events.StatusMeta) bool {
	return m.Switched || m.Resumed || strings.HasPrefix(e.Text, "active agent: ")
}

func validAgent(s string) bool {
	return s == agents.Claude || s == agents.Codex || s == "orchestrator"
}

func (r *resumeReader) take(e events.Event) error {
	rs := r.rs
	rs.Events++
	if e.SchemaVersion != events.SchemaVersion {
		rs.Versions[e.SchemaVersion]++
	}
	if !events.ValidRole(e.Role) || !events.ValidKind(e.Kind) {
		rs.Unknown++
		return nil
	}
	at := e.Time()
	if rs.First.IsZero() {
		rs.First = at
	}
	rs.Last = at
	if r.recap != nil && recapKind(&e) {
		r.recap.Push(e)
	}
	bad := false
	switch e.Kind {
	case events.KindCommand:
		r.takeCommand(&e, at, &bad)
	case events.KindStatus:
		r.takeStatus(&e, at, &bad)
	case events.KindMessage:
		if m := meta[events.MessageMeta](&e, &bad); e.Role == events.RoleUser && !m.Note {
			r.setActive(at, m.Agent, "ask")
		}
	case events.KindPlan:
		r.takePlan(&e, at, &bad)
	case events.KindExecute:
		r.takeExecute(&e, at, &bad)
	case events.KindAgentRun:
		r.takeAgentRun(&e, at, &bad)
	case events.KindChatSent:
		r.takeChatSent(&e, at, &bad)
	case events.KindChatDelivered:
		m := meta[events.ChatDeliveredMeta](&e, &bad)
		if key, ok := r.chatKey(m.Session, m.MessageID, &bad); ok {
			if c := r.chats[key]; c != nil {
				c.Delivered, c.DeliveredAt, c.Lane = true, at, m.Lane
			}
		}
	case events.KindChatReply:
		m := meta[events.ChatReplyMeta](&e, &bad)
		if key, ok := r.chatKey(m.Session, m.MessageID, &bad); ok {
			delete(r.chats, key)
		}
	}
	if bad {
		rs.BadMeta++
	}
	return nil
}

// setActive records a as the room's agent, said so by from at time at.
func (r *resumeReader) setActive(at time.Time, a, from string) {
	if validAgent(a) {
		r.rs.Active, r.rs.ActiveAt, r.rs.ActiveFrom = a, at, from
	}
}

// takeCommand reads a command: /agent, /target and /continue say what the
// room was doing.
func (r *resumeReader) takeCommand(e *events.Event, at time.Time, bad *bool) {
	rs := r.rs
	m := meta[events.CommandMeta](e, bad)
	if m.Error != "" {
		return
	}
	cmd := m.Command
	f := strings.Fields(e.Text)
	switch {
	case cmd == "agent" && len(f) == 2 && (strings.EqualFold(f[1], agents.Claude) || strings.EqualFold(f[1], agents.Codex)):
		// /agent orchestrator counts only through the status event a
		// successful switch logs: the command may have been refused.
		r.setActive(at, strings.ToLower(f[1]), "/agent")
	case cmd == "target" && len(f) == 2 && conversation.ValidSessionID(f[1]) == nil:
		rs.Target, rs.FollowsLead = f[1], false
	case cmd == "target" && len(f) == 2 && f[1] == "lead":
		rs.Target, rs.FollowsLead = "", true
	case cmd == "continue" && m.Confirmed == nil:
		n, err := ParseMaxSteps(strings.Join(f[1:], " "))
		if err == nil {
			r.loopMax = n
		}
		r.resumeFrom = 0
	case cmd == "continue" && *m.Confirmed:
		switch {
		case m.Step == 0:
			r.loop = &LoopRecord{Max: r.loopMax, At: at}
			switch {
			case r.resumeHalf == halfPlan && r.resumeFrom >= 1:
				// The resumed loop starts with the plan update of a step that ran.
				r.loop.Done, r.loop.Planned = r.resumeFrom, r.resumeFrom-1
			case r.resumeFrom > 1:
				r.loop.Done, r.loop.Planned = r.resumeFrom-1, r.resumeFrom-1 // the earlier steps' outcomes are kept
			default:
				clear(r.stepOut)
				clear(r.answers)
			}
			r.resumeFrom, r.resumeHalf = 0, ""
		case r.loop != nil && m.Half != halfPlan:
			// A step's executor half began: the plan update before it is
			// done (or, in a log from before plan updates, not part of it).
			r.loop.Planned = max(r.loop.Planned, m.Step-1)
		}
	}
}

// takeStatus reads a status event: a new conversation, a loop offered for
// resuming, a switch of the room's agent.
func (r *resumeReader) takeStatus(e *events.Event, at time.Time, bad *bool) {
	rs := r.rs
	m := meta[events.StatusMeta](e, bad)
	if m.NewConversation != "" {
		delete(rs.Conversations, m.NewConversation)
	}
	if m.LoopResumeFrom > 1 {
		r.resumeFrom = m.LoopResumeFrom
		if m.MaxSteps > 0 {
			r.loopMax = m.MaxSteps
		}
	}
	if from := m.LoopResumeFrom; from != 0 {
		// The half offered; a plan update may be step 1's.
		r.resumeHalf = m.LoopResumeHalf
		if m.MaxSteps > 0 && from == 1 && r.resumeHalf == halfPlan {
			r.resumeFrom, r.loopMax = from, m.MaxSteps
		}
	}
	// Only a switch (/agent) or a resume says what the room's agent
	// was: a one-shot `relay-baton status` logs the default agent.
	if switchedAgent(e, m) {
		r.setActive(at, m.Agent, "status")
		// A switch to the orchestrator names the session it talks to.
		switch {
		case m.Agent == AgentOrchestrator && m.FollowsLead:
			rs.Target, rs.FollowsLead = "", true
		case m.Agent == AgentOrchestrator && conversation.ValidSessionID(m.Session) == nil:
			rs.Target, rs.FollowsLead = m.Session, false
		}
	}
}

// takePlan reads a plan: a loop step's plan update, or a new plan.
func (r *resumeReader) takePlan(e *events.Event, at time.Time, bad *bool) {
	rs := r.rs
	m := meta[events.PlanMeta](e, bad)
	inLoop := m.LoopStep != nil
	if inLoop && r.loop != nil {
		// The planner half of a loop step: the loop goes on.
		r.loop.Planned = max(r.loop.Planned, *m.LoopStep)
		r.loop.At = at
	}
	if !m.Written {
		return
	}
	rs.Plan = &PlanRecord{At: at, Agent: m.Agent, Text: e.Text, Missing: m.MissingSections}
	if !inLoop {
		r.loop = nil // a new plan makes an old loop moot
	}
}

// takeExecute reads an executor step of the loop in r.loop.
func (r *resumeReader) takeExecute(e *events.Event, at time.Time, bad *bool) {
	if r.loop == nil {
		return
	}
	m := meta[events.ExecuteMeta](e, bad)
	if m.StopReason != "" {
		r.loop.Reason, r.loop.StopHalf = m.StopReason, m.Half
		if m.Steps != nil {
			r.loop.Done = *m.Steps
		}
		return
	}
	if m.Step != 0 {
		r.loop.Done = m.Step
		r.loop.At = at
		if m.MaxSteps > 0 {
			r.loop.Max = m.MaxSteps
		}
		r.stepOut[m.Step] = e.Text
		if r.answers == nil {
			r.answers = map[int]string{}
		}
		r.answers[m.Step] = e.Text
		if m.Answer != "" {
			r.answers[m.Step] = m.Answer
		}
	}
}

// takeAgentRun reads an agent run: the last run, and the conversation each
// agent can continue.
func (r *resumeReader) takeAgentRun(e *events.Event, at time.Time, bad *bool) {
	rs := r.rs
	m := meta[events.AgentRunMeta](e, bad)
	if !m.Ran {
		return
	}
	l := &reports.LastRun{Command: m.Command, Agent: m.Agent, At: at, Cancelled: m.Cancelled, CostUSD: m.CostUSD, Reason: m.Reason}
	if l.Agent == "" {
		l.Agent = string(e.Role)
	}
	if m.ExitCode != nil {
		l.ExitCode = *m.ExitCode
	}
	if m.DurationMs != nil {
		l.Duration = time.Duration(*m.DurationMs) * time.Millisecond
	}
	rs.LastRun = l
	// A failed first run (logged so by an earlier build) never
	// completed a turn: not a conversation to continue.
	failedFirst := (l.ExitCode != 0 || l.Cancelled || m.Error != "") && m.ConversationTurns <= 1
	if id := m.Conversation; id != "" && !failedFirst && (l.Agent == agents.Claude || l.Agent == agents.Codex) {
		// What the CLI reported: the reported* fields when it reported
		// running totals, else the run's own (logs before them hold
		// the reported cost in costUsd).
		rep := events.Usage{CostUSD: m.CostUSD, InputTokens: m.InputTokens, CachedInputTokens: m.CachedInputTokens, OutputTokens: m.OutputTokens}
		if m.ReportedCostUSD != 0 || m.ReportedInputTokens != 0 || m.ReportedCachedInputTokens != 0 || m.ReportedOutputTokens != 0 {
			rep = events.Usage{CostUSD: m.ReportedCostUSD, InputTokens: m.ReportedInputTokens, CachedInputTokens: m.ReportedCachedInputTokens, OutputTokens: m.ReportedOutputTokens}
		}
		rs.Conversations[l.Agent] = AgentConversation{ID: id, Turns: m.ConversationTurns, InputTokens: m.InputTokens + m.CachedInputTokens, Reported: rep}
	}
	if lost := m.ResumeFailed; lost != "" && rs.Conversations[l.Agent].ID == lost {
		delete(rs.Conversations, l.Agent)
	}
	if l.Command == "ask" {
		r.setActive(at, l.Agent, "ask")
	}
}

// takeChatSent reads a chat message sent to a session: pending until its
// reply.
func (r *resumeReader) takeChatSent(e *events.Event, at time.Time, bad *bool) {
	rs := r.rs
	m := meta[events.ChatSentMeta](e, bad)
	key, ok := r.chatKey(m.Session, m.MessageID, bad)
	if !ok {
		return
	}
	if r.chats[key] == nil {
		r.order = append(r.order, key)
	}
	c := &PendingChat{Session: m.Session, MessageID: m.MessageID, Text: e.Text, SentAt: at, Offset: m.TranscriptOffset}
	if c.Offset <= 0 {
		c.Offset = max(m.LegacyOffset, 0)
	}
	r.chats[key] = c
	if !rs.FollowsLead {
		rs.Target = m.Session
	}
}

// chatKey is the key of a chat message in the log: session/message id.
func (r *resumeReader) chatKey(sid, id string, bad *bool) (string, bool) {
	if sid == "" || id == "" || conversation.ValidSessionID(sid) != nil {
		*bad = true
		return "", false
	}
	return sid + "/" + id, true
}

// continuity is what the room carries over from a resumed log that has no
// other home in the engine yet.
type continuity struct {
	target string
}

// resolveChat looks message c up in the session's chat folder: still
// queued, delivered (with the reply from the outbox or the transcript if it
// came meanwhile), or gone.
func resolveChat(ctx context.Context, workspace string, c *PendingChat) {
	s, err := conversation.OpenSession(workspace, c.Session)
	if err != nil {
		c.State, c.Err = "unreadable", err
		return
	}
	st, err := s.State(c.MessageID)
	switch {
	case errors.Is(err, conversation.ErrNotQueued):
		c.State = "gone"
		return
	case err != nil:
		c.State, c.Err = "unreadable", err
		return
	case st.Queued:
		c.State, c.Ahead = "queued", st.Ahead
		return
	}
	c.Delivered, c.State = true, "delivered"
	if st.Incomplete {
		// Claimed, never handed over: not delivered, whatever the log says.
		c.Delivered, c.State = false, "unconfirmed"
	}
	if st.Delivered.Lane != "" {
		c.Lane = string(st.Delivered.Lane)
	}
	if st.Delivered.DeliveredAt != nil {
		c.DeliveredAt = *st.Delivered.DeliveredAt
	}
	if text, ok := s.Reply(c.MessageID); ok && strings.TrimSpace(text) != "" {
		c.State, c.Reply = "replied", text
		return
	}
	path := conversation.LocateTranscript(s)
	if path == "" {
		return
	}
	if text, ok := transcriptReply(ctx, path, c.Offset, c.MessageID); ok {
		c.State, c.Reply = "replied", text
		return
	}
	if st.Unconfirmed && !st.Incomplete {
		c.State = "unconfirmed" // handed over, never seen in the transcript yet
	}
}

// transcriptReply scans a transcript from offset (where it ended when the
// message was sent, when known; a transcript shorter than that was replaced
// and is read from its start) for the delivery of message id, and returns
// the text of the turn that answered it, once that turn ended.
func transcriptReply(ctx context.Context, path string, offset int64, id string) (string, bool) {
	if offset > transcript.Size(path) {
		offset = 0
	}
	var reply strings.Builder
	seen, done := false, false
	_ = transcript.Tail(ctx, transcript.TailOptions{Path: path, Offset: offset, OnActivity: func(_ int64, acts []events.Activity) bool {
		for _, a := range acts {
			switch {
			case !seen:
				seen = a.Kind == events.ActDelivered && strings.Contains(a.Text, id)
			case a.Kind == events.ActText:
				if reply.Len() > 0 {
					reply.WriteString("\n")
				}
				reply.WriteString(a.Text)
			case a.Kind == events.ActDone:
				done = true
				return false
			}
		}
		return true
	}})
	return reply.String(), done
}

// ago renders how long ago t was, coarsely: 45s, 12m, 3h, 2d.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// Resume rebuilds the room's state from the conversation log: it prints a
// recap of the last recap turns (as replay renders them), applies the
// active agent, the orchestrator target and the last run, shows chat
// messages still waiting (picking up replies that arrived meanwhile), says
// what it skipped, and offers to continue an unfinished /continue loop:
// that runs only after its preview is confirmed.
func (e *Engine) Resume(ctx context.Context, recap int) (*ResumeState, error) {
	rs, err := ReadResume(e.LogPath(), recap)
	if err != nil {
		return rs, fmt.Errorf("resume: %w", err)
	}
	now := e.now()
	if rs.Events == 0 && rs.Stats.Skipped() == 0 {
		e.Say("resume: nothing recorded yet in .ai-session/conversation.jsonl; starting fresh.")
		return rs, nil
	}
	if rs.First.IsZero() {
		e.Say("resuming from .ai-session/conversation.jsonl: no usable events")
	} else {
		e.Say("resuming from .ai-session/conversation.jsonl: %s, %s to %s", render.Count(rs.Events, "event"),
			rs.First.UTC().Format("2006-01-02 15:04Z"), rs.Last.UTC().Format("2006-01-02 15:04Z"))
	}
	if len(rs.Recap) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "last %s:\n", render.Count(len(rs.Recap), "turn"))
		for i, ev := range rs.Recap {
			b.WriteString("  ")
			b.WriteString(replay.FormatEvent(i+1, ev, e.out.color))
			b.WriteString("\n")
		}
		e.out.raw(b.String())
	}
	var lines []string
	switch a := rs.Active; {
	case a == agents.Claude || a == agents.Codex:
		e.Active = a
		lines = append(lines, fmt.Sprintf("active agent: %s (restored from the log: %s %s ago)", a, activeWords[rs.ActiveFrom], ago(now.Sub(rs.ActiveAt))))
	case a == AgentOrchestrator:
		// The switch says which session it talks to (the target, else the lead).
		if err := e.UseOrchestrator(rs.Target); err != nil {
			lines = append(lines, fmt.Sprintf("active agent was %s; not restored: %v", a, err))
		}
	case a != "":
		lines = append(lines, fmt.Sprintf("active agent was %q, which this version does not know; staying on %s", a, e.Active))
	default:
		lines = append(lines, "active agent: "+e.Active+" (the log names none)")
	}
	if rs.Target != "" {
		// Remembered for the next /agent orchestrator; it does not switch
		// the active agent by itself.
		e.cont.target = rs.Target
		if e.Active != AgentOrchestrator {
			e.chat.target = rs.Target
		}
		lines = append(lines, "orchestrator target: "+rs.Target)
	}
	age, havePlan := e.planAge()
	switch {
	case havePlan && rs.Plan != nil:
		l := fmt.Sprintf("plan: .ai-session/plan.md, %s old (written by %s per the log, %s ago)", ago(age), rs.Plan.Agent, ago(now.Sub(rs.Plan.At)))
		if len(rs.Plan.Missing) > 0 {
			l += "; lacks " + strings.Join(rs.Plan.Missing, ", ")
		}
		lines = append(lines, l)
	case havePlan:
		lines = append(lines, fmt.Sprintf("plan: .ai-session/plan.md, %s old (not written in a logged turn)", ago(age)))
	case rs.Plan != nil:
		lines = append(lines, fmt.Sprintf("plan: the log says %s wrote one %s ago, but .ai-session/plan.md is gone", rs.Plan.Agent, ago(now.Sub(rs.Plan.At))))
	default:
		lines = append(lines, "plan: none")
	}
	e.restoreConversations(rs)
	for _, a := range []string{agents.Claude, agents.Codex} {
		if c, ok := rs.Conversations[a]; ok {
			lines = append(lines, fmt.Sprintf("%s conversation: %s (%s), continued by the next %s run (/new %s starts afresh)", a, c.ID, plural(c.Turns, "turn"), a, a))
		}
	}
	if rs.LastRun != nil {
		if e.last == nil {
			e.last = rs.LastRun
		}
		lines = append(lines, "last run: "+runWords(rs.LastRun, now))
	}
	if len(rs.Chats) > 0 {
		ws, err := workspace.Resolve(e.Root)
		if err != nil {
			ws = e.Root
		}
		for i := range rs.Chats {
			c := &rs.Chats[i]
			resolveChat(ctx, ws, c)
			lines = append(lines, chatWords(c, now))
			if c.State == "unconfirmed" {
				e.chat.unconfirmed = &sentMessage{Workspace: ws, Session: c.Session, ID: c.MessageID, Text: c.Text}
			}
			if c.State == "replied" {
				e.emit(events.RoleOrchestrator, summary(c.Reply, 1000), nil,
					events.ChatReplyMeta{Session: c.Session, MessageID: c.MessageID, Lane: c.Lane, Source: "resume"})
			}
		}
	}
	if s := skippedWords(rs); s != "" {
		lines = append(lines, s)
	}
	e.Say("%s", strings.Join(lines, "\n"))
	e.emit(events.RoleRelayBaton, fmt.Sprintf("resumed from %s (%d skipped)", render.Count(rs.Events, "event"), rs.Stats.Skipped()+rs.Unknown), nil,
		events.StatusMeta{Agent: e.Active, Resumed: true, Events: events.Int(rs.Events), SkippedLines: events.Int(rs.Stats.Skipped()), SkippedEvents: events.Int(rs.Unknown)})
	if rs.Loop != nil {
		return rs, e.offerLoop(ctx, rs.Loop, now)
	}
	return rs, nil
}

var activeWords = map[string]string{"/agent": "chosen with /agent", "status": "active", "ask": "last asked"}

func runWords(l *reports.LastRun, now time.Time) string {
	state := fmt.Sprintf("exit %d", l.ExitCode)
	if l.Cancelled {
		state = "cancelled"
	}
	s := fmt.Sprintf("%s /%s, %s in %s, %s ago", l.Agent, l.Command, state, l.Duration.Round(time.Millisecond), ago(now.Sub(l.At)))
	if l.CostUSD > 0 {
		s += ", " + money(l.CostUSD)
	}
	if l.Reason != "" {
		s += ": " + l.Reason
	}
	return s
}

func chatWords(c *PendingChat, now time.Time) string {
	head := fmt.Sprintf("chat %s to %s (sent %s ago): ", c.MessageID, shortID(c.Session), ago(now.Sub(c.SentAt)))
	switch c.State {
	case "queued":
		return head + fmt.Sprintf("still queued, %d ahead: %q", c.Ahead, summary(c.Text, 60))
	case "replied":
		return head + "reply (arrived while the room was closed):\n" + indent(c.Reply, "  │ ")
	case "delivered":
		via := ""
		if c.Lane != "" {
			via = " via the " + c.Lane + " lane"
		}
		when := ""
		if !c.DeliveredAt.IsZero() {
			when = " " + ago(now.Sub(c.DeliveredAt)) + " ago"
		}
		return head + "delivered" + via + when + ", no reply yet"
	case "gone":
		return head + "no longer in the inbox and never delivered (cancelled)"
	case "unconfirmed":
		via := ""
		if c.Lane != "" {
			via = " by the " + c.Lane + " lane"
		}
		return head + "claimed" + via + " but not confirmed in the session's transcript (its claimer may have died): the next lane delivers it again; /resend puts it back in the inbox now"
	}
	return head + fmt.Sprintf("cannot read its chat folder: %v", c.Err)
}

func shortID(id string) string { return id[:min(8, len(id))] }

func indent(s, prefix string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = prefix + l
	}
	return strings.Join(ls, "\n")
}

// skippedWords says what the resume did not use, or "".
func skippedWords(rs *ResumeState) string {
	var parts []string
	if n := rs.Stats.Skipped(); n > 0 {
		s := fmt.Sprintf("skipped %s", render.Count(n, "damaged line"))
		if rs.Stats.FirstSkipped > 0 {
			s += fmt.Sprintf(" (first at line %d", rs.Stats.FirstSkipped)
			if rs.Stats.FirstError != "" {
				s += ": " + summary(rs.Stats.FirstError, 80)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	if len(rs.Versions) > 0 {
		vs := make([]int, 0, len(rs.Versions))
		n := 0
		for v, c := range rs.Versions {
			vs = append(vs, v)
			n += c
		}
		sort.Ints(vs)
		var names []string
		for _, v := range vs {
			names = append(names, fmt.Sprintf("v%d: %d", v, rs.Versions[v]))
		}
		parts = append(parts, fmt.Sprintf("%s of another schema version (%s; this build writes v%d): used what it understands", render.Count(n, "event"), strings.Join(names, ", "), events.SchemaVersion))
	}
	if rs.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("skipped %s of a role or kind this build does not know", render.Count(rs.Unknown, "event")))
	}
	if rs.BadMeta > 0 {
		parts = append(parts, fmt.Sprintf("ignored unexpected fields in %s", render.Count(rs.BadMeta, "event")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "resume: " + strings.Join(parts, "; ")
}

// offerLoop offers to continue an unfinished loop from the step it stopped
// at. It runs only after the step's preview is confirmed, even with --yes.
func (e *Engine) offerLoop(ctx context.Context, l *LoopRecord, now time.Time) error {
	why := "the room closed during it"
	if l.Reason != "" {
		why = "stopped: " + l.Reason
	}
	e.Say("an unfinished /continue loop: %d of %d steps ran (%s, %s ago).", l.Done, l.Max, why, ago(now.Sub(l.At)))
	if e.term == nil {
		e.Say("/continue starts a new loop; resuming this one needs a terminal to confirm on.")
		return nil
	}
	if _, err := e.readPlan(); err != nil {
		e.Say("not offered: %v", err)
		return nil
	}
	half := l.Half
	if half != halfPlan {
		half = halfExecute
	}
	which := ""
	if half == halfPlan {
		which = fmt.Sprintf(" with %s's plan update", e.Planner)
	}
	e.Say("offering to continue from step %d of %d%s: answer y to run it, anything else leaves it.", l.From, l.Max, which)
	e.emit(events.RoleRelayBaton, fmt.Sprintf("offered to continue the /continue loop at step %d of %d (%s half)", l.From, l.Max, half), nil,
		events.StatusMeta{LoopResumeFrom: l.From, LoopResumeHalf: half, MaxSteps: l.Max})
	yes := e.autoYes
	e.autoYes = false
	defer func() { e.autoYes = yes }()
	_, err := e.continueLoop(ctx, loopStart{Step: l.From, Half: half, Previous: l.Previous, Answer: l.Answer}, l.Max)
	if errors.Is(err, ErrDeclined) {
		return nil
	}
	return err
}

func (e *Engine) cmdResume(ctx context.Context, args string) error {
	n := DefaultRecap
	if f := strings.Fields(args); len(f) > 0 {
		if _, err := fmt.Sscanf(strings.Join(f, " "), "%d", &n); err != nil || n < 1 || n > MaxRecap || len(f) > 1 {
			return fmt.Errorf("usage: /resume [N] (N turns of recap, 1 to %d), not %q", MaxRecap, args)
		}
	}
	_, err := e.Resume(ctx, n)
	return err
}
