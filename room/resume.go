package room

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room/chatlane"
	"github.com/relay-baton/relay-baton/workspace"
)

// continuity is what the room carries over from a resumed log that has no
// other home in the engine yet.
type continuity struct {
	target string
}

// Resume rebuilds the room's state from the conversation log: it prints a
// recap of the last recap turns (as replay renders them), applies the
// active agent, the orchestrator target and the last run, shows chat
// messages still waiting (picking up replies that arrived meanwhile), says
// what it skipped, and offers to continue an unfinished /continue loop:
// that runs only after its preview is confirmed.
func (e *Engine) Resume(ctx context.Context, recap int) (*resume.State, error) {
	rs, err := resume.Read(e.LogPath(), recap)
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
		lines = append(lines, fmt.Sprintf("active agent: %s (restored from the log: %s %s ago)", a, activeWords[rs.ActiveFrom], render.Ago(now.Sub(rs.ActiveAt))))
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
			e.chat.Target = rs.Target
		}
		lines = append(lines, "orchestrator target: "+rs.Target)
	}
	age, havePlan := e.planMD.age()
	switch {
	case havePlan && rs.Plan != nil:
		l := fmt.Sprintf("plan: .ai-session/plan.md, %s old (written by %s per the log, %s ago)", render.Ago(age), rs.Plan.Agent, render.Ago(now.Sub(rs.Plan.At)))
		if len(rs.Plan.Missing) > 0 {
			l += "; lacks " + strings.Join(rs.Plan.Missing, ", ")
		}
		lines = append(lines, l)
	case havePlan:
		lines = append(lines, fmt.Sprintf("plan: .ai-session/plan.md, %s old (not written in a logged turn)", render.Ago(age)))
	case rs.Plan != nil:
		lines = append(lines, fmt.Sprintf("plan: the log says %s wrote one %s ago, but .ai-session/plan.md is gone", rs.Plan.Agent, render.Ago(now.Sub(rs.Plan.At))))
	default:
		lines = append(lines, "plan: none")
	}
	e.convs.restore(rs)
	if l := e.wt.Resume(ctx); l != "" {
		lines = append(lines, l)
	}
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
	if c := rs.Costs; c.Runs > 0 {
		// The log holds every run the room's spending counts (this
		// session's own runs too, when /resume is typed later).
		e.spent = Spent{Costs: c, FromLog: c.Runs}
		lines = append(lines, fmt.Sprintf("costs: %s over %s, per the log (/costs lists each run)", render.UsageWords(c.Total), plural(c.Runs, "run")))
	}
	if len(rs.Chats) > 0 {
		ws, err := workspace.Resolve(e.Root)
		if err != nil {
			ws = e.Root
		}
		for i := range rs.Chats {
			c := &rs.Chats[i]
			c.Resolve(ctx, ws)
			lines = append(lines, chatWords(c, now))
			if c.State == "unconfirmed" {
				e.chat.Unconfirmed = &chatlane.Sent{Workspace: ws, Session: c.Session, ID: c.MessageID, Text: c.Text}
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
	s := fmt.Sprintf("%s /%s, %s in %s, %s ago", l.Agent, l.Command, state, l.Duration.Round(time.Millisecond), render.Ago(now.Sub(l.At)))
	if l.CostUSD > 0 {
		s += ", " + render.Money(l.CostUSD)
	}
	if l.Reason != "" {
		s += ": " + l.Reason
	}
	return s
}

func chatWords(c *resume.PendingChat, now time.Time) string {
	head := fmt.Sprintf("chat %s to %s (sent %s ago): ", c.MessageID, render.ShortID(c.Session), render.Ago(now.Sub(c.SentAt)))
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
			when = " " + render.Ago(now.Sub(c.DeliveredAt)) + " ago"
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

func indent(s, prefix string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = prefix + l
	}
	return strings.Join(ls, "\n")
}

// skippedWords says what the resume did not use, or "".
func skippedWords(rs *resume.State) string {
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
func (e *Engine) offerLoop(ctx context.Context, l *resume.LoopRecord, now time.Time) error {
	why := "the room closed during it"
	if l.Reason != "" {
		why = "stopped: " + l.Reason
	}
	e.Say("an unfinished /continue loop: %d of %d steps ran (%s, %s ago).", l.Done, l.Max, why, render.Ago(now.Sub(l.At)))
	if e.pv.term == nil {
		e.Say("/continue starts a new loop; resuming this one needs a terminal to confirm on.")
		return nil
	}
	if _, err := e.planMD.read(); err != nil {
		e.Say("not offered: %v", err)
		return nil
	}
	half := l.Half
	if half != resume.HalfPlan {
		half = resume.HalfExecute
	}
	which := ""
	if half == resume.HalfPlan {
		which = fmt.Sprintf(" with %s's plan update", e.Planner)
	}
	e.Say("offering to continue from step %d of %d%s: answer y to run it, anything else leaves it.", l.From, l.Max, which)
	e.emit(events.RoleRelayBaton, fmt.Sprintf("offered to continue the /continue loop at step %d of %d (%s half)", l.From, l.Max, half), nil,
		events.StatusMeta{LoopResumeFrom: l.From, LoopResumeHalf: half, MaxSteps: l.Max})
	yes := e.pv.autoYes
	e.pv.autoYes = false
	defer func() { e.pv.autoYes = yes }()
	_, err := newLoop(e).continueLoop(ctx, loopStart{Step: l.From, Half: half, Previous: l.Previous, Answer: l.Answer}, l.Max)
	if errors.Is(err, ErrDeclined) {
		return nil
	}
	return err
}

func cmdResume(e *Engine, ctx context.Context, args string) error {
	n := resume.DefaultRecap
	if f := strings.Fields(args); len(f) > 0 {
		if _, err := fmt.Sscanf(strings.Join(f, " "), "%d", &n); err != nil || n < 1 || n > resume.MaxRecap || len(f) > 1 {
			return fmt.Errorf("usage: /resume [N] (N turns of recap, 1 to %d), not %q", resume.MaxRecap, args)
		}
	}
	_, err := e.Resume(ctx, n)
	return err
}
