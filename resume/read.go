// Package resume reads back what the Agent Room's conversation log says the
// last sessions left behind: the active agent, the orchestrator target, the
// last plan and run, an unfinished /continue loop, the agents'
// conversations, chat messages still waiting for a reply, and a recap of
// the last turns. `chat --resume`, /resume, the one-shot commands'
// --continue and the serve page's view all read the log through it.
package resume

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/reports"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/transcript"
)

// orchestrator is the room's agent name for the orchestrator session.
const orchestrator = "orchestrator"

// Conversation is an agent's conversation as the log records it: the one
// its next run continues.
type Conversation struct {
	ID    string // claude session id / codex thread id
	Turns int    // runs of relay-baton in it
	// InputTokens is what the last run sent the model (its context, with
	// cached tokens): the conversation's size as the model sees it.
	InputTokens int64
	// Reported is the usage the conversation's last run reported, as its
	// CLI reports it (running totals), to tell the next run's own usage
	// from it.
	Reported events.Usage
}

// DefaultRecap is how many turns `chat --resume` and /resume replay.
const DefaultRecap = 6

// MaxRecap is the most turns a resume recaps: --recap and /resume N take
// 1 to MaxRecap.
const MaxRecap = 200

// State is the room's state rebuilt from conversation.jsonl by
// Read: what the last sessions left behind.
type State struct {
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
	Conversations map[string]Conversation
	Recap         []events.Event
	// Costs are the agent runs the log records and what each cost.
	Costs  Costs
	Events int          // events read
	Stats  events.Stats // lines read and skipped (damaged, too long)
	// Versions counts events written with another schema version, by
	// version; Unknown counts events skipped because their role or kind
	// is not one this build knows.
	Versions map[int]int
	Unknown  int
	BadMeta  int // events whose meta fields had unexpected types (those fields ignored)
	First    time.Time
	Last     time.Time
}

// LatestCosts is how many of the latest runs Costs keeps one by one (the
// totals count them all).
const LatestCosts = 20

// Costs are the agent runs that ran, per the log (agent_run events), and
// their own usage: every run counted in the totals, the latest
// LatestCosts kept one by one.
type Costs struct {
	Runs    int
	Total   events.Usage
	ByAgent map[string]events.Usage
	Latest  []RunCost // oldest first
}

// RunCost is what one agent run cost: its own usage, as logged.
type RunCost struct {
	Agent   string
	Command string
	At      time.Time
	Usage   events.Usage
}

// Add counts one run into c, keeping at most keep runs in Latest.
func (c *Costs) Add(r RunCost, keep int) {
	c.Runs++
	c.Total = c.Total.Plus(r.Usage)
	if c.ByAgent == nil {
		c.ByAgent = map[string]events.Usage{}
	}
	c.ByAgent[r.Agent] = c.ByAgent[r.Agent].Plus(r.Usage)
	c.Latest = append(c.Latest, r)
	if over := len(c.Latest) - keep; over > 0 {
		c.Latest = append(c.Latest[:0], c.Latest[over:]...)
	}
}

// Earlier is how many runs the totals count that Latest does not list.
func (c *Costs) Earlier() int { return c.Runs - len(c.Latest) }

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

// Reader rebuilds a State from a log's events, one Take at a time.
type Reader struct {
	rs      *State
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

// NewReader is a reader at the top of a log, every map of its state
// made: Read and the serve page's view both start here, so an event one
// of them can take the other can too.
func NewReader() *Reader {
	rs := &State{Versions: map[int]int{}, Conversations: map[string]Conversation{}}
	return &Reader{rs: rs, stepOut: map[int]string{}, answers: map[int]string{}, chats: map[string]*PendingChat{}}
}

// State is what the events taken so far describe.
func (r *Reader) State() *State { return r.rs }

// Read streams the log at path (never holding more than the recap
// and the pending chat messages) and rebuilds the room's state. A missing
// log gives a fresh state. Damaged lines and events this build does not
// understand are skipped and counted.
func Read(path string, recap int) (*State, error) {
	r := NewReader()
	rs := r.rs
	if recap > 0 {
		r.recap = replay.NewRing(recap)
	}
	st, err := events.ReadFile(path, r.Take)
	rs.Stats = st
	if err != nil && !errors.Is(err, events.ErrNoLog) {
		return rs, err
	}
	if r.recap != nil {
		r.recap.Each(func(e *events.Event) { rs.Recap = append(rs.Recap, *e) })
	}
	if l := r.loop; l != nil && (l.Reason == "" || l.Reason == string(StopCancelled) || l.Reason == string(StopFailure)) {
		switch {
		case l.Reason != "" && l.StopHalf == HalfPlan:
			l.From, l.Half = max(1, l.Done), HalfPlan // redo the plan update that was cancelled or failed
		case l.Reason != "":
			l.From, l.Half = max(1, l.Done), HalfExecute // redo the step that was cancelled or failed
		case l.Planned < l.Done:
			l.From, l.Half = l.Done, HalfPlan // the step ran; its plan update did not
		default:
			l.From, l.Half = l.Done+1, HalfExecute
		}
		// The last step has no plan update.
		if l.From <= l.Max && !(l.Half == HalfPlan && l.From >= l.Max) {
			l.Previous = r.stepOut[l.From-1]
			if l.Half == HalfPlan {
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
	return s == agents.Claude || s == agents.Codex || s == orchestrator
}

// Take reads one event into the state (an events.ReadFile callback: it
// never fails).
func (r *Reader) Take(e events.Event) error {
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
func (r *Reader) setActive(at time.Time, a, from string) {
	if validAgent(a) {
		r.rs.Active, r.rs.ActiveAt, r.rs.ActiveFrom = a, at, from
	}
}

// takeCommand reads a command: /agent, /target and /continue say what the
// room was doing.
func (r *Reader) takeCommand(e *events.Event, at time.Time, bad *bool) {
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
			case r.resumeHalf == HalfPlan && r.resumeFrom >= 1:
				// The resumed loop starts with the plan update of a step that ran.
				r.loop.Done, r.loop.Planned = r.resumeFrom, r.resumeFrom-1
			case r.resumeFrom > 1:
				r.loop.Done, r.loop.Planned = r.resumeFrom-1, r.resumeFrom-1 // the earlier steps' outcomes are kept
			default:
				clear(r.stepOut)
				clear(r.answers)
			}
			r.resumeFrom, r.resumeHalf = 0, ""
		case r.loop != nil && m.Half != HalfPlan:
			// A step's executor half began: the plan update before it is
			// done (or, in a log from before plan updates, not part of it).
			r.loop.Planned = max(r.loop.Planned, m.Step-1)
		}
	}
}

// takeStatus reads a status event: a new conversation, a loop offered for
// resuming, a switch of the room's agent.
func (r *Reader) takeStatus(e *events.Event, at time.Time, bad *bool) {
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
		if m.MaxSteps > 0 && from == 1 && r.resumeHalf == HalfPlan {
			r.resumeFrom, r.loopMax = from, m.MaxSteps
		}
	}
	// Only a switch (/agent) or a resume says what the room's agent
	// was: a one-shot `relay-baton status` logs the default agent.
	if switchedAgent(e, m) {
		r.setActive(at, m.Agent, "status")
		// A switch to the orchestrator names the session it talks to.
		switch {
		case m.Agent == orchestrator && m.FollowsLead:
			rs.Target, rs.FollowsLead = "", true
		case m.Agent == orchestrator && conversation.ValidSessionID(m.Session) == nil:
			rs.Target, rs.FollowsLead = m.Session, false
		}
	}
}

// takePlan reads a plan: a loop step's plan update, or a new plan.
func (r *Reader) takePlan(e *events.Event, at time.Time, bad *bool) {
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
func (r *Reader) takeExecute(e *events.Event, at time.Time, bad *bool) {
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
func (r *Reader) takeAgentRun(e *events.Event, at time.Time, bad *bool) {
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
	rs.Costs.Add(RunCost{Agent: l.Agent, Command: l.Command, At: at, Usage: events.Usage{CostUSD: m.CostUSD,
		InputTokens: m.InputTokens, CachedInputTokens: m.CachedInputTokens, OutputTokens: m.OutputTokens}}, LatestCosts)
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
		rs.Conversations[l.Agent] = Conversation{ID: id, Turns: m.ConversationTurns, InputTokens: m.InputTokens + m.CachedInputTokens, Reported: rep}
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
func (r *Reader) takeChatSent(e *events.Event, at time.Time, bad *bool) {
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
func (r *Reader) chatKey(sid, id string, bad *bool) (string, bool) {
	if sid == "" || id == "" || conversation.ValidSessionID(sid) != nil {
		*bad = true
		return "", false
	}
	return sid + "/" + id, true
}

// Resolve looks message c up in the session's chat folder: still
// queued, delivered (with the reply from the outbox or the transcript if it
// came meanwhile), or gone.
func (c *PendingChat) Resolve(ctx context.Context, workspace string) {
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
