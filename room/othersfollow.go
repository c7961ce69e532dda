package room

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/runs"
	"github.com/relay-baton/relay-baton/workspace"
)

// Two screens, one conversation: every screen (a terminal room, the page
// of relay-baton serve, a one-shot command) appends to the same
// conversation.jsonl, and a terminal room follows it from where it
// started to show, above its prompt, the turns another process appended.
// An event is another screen's when its sessionId is not this engine's:
// each engine writes its own random session id into every event it
// appends, inside the line itself, so the test holds whatever order two
// processes' appends land in. Each screen that follows (or is followed)
// names itself in .ai-session/screens/<session id>.json, for the label
// ("page", "another room"); a writer without a record (a one-shot
// command) is "another relay-baton process".

// ScreensDir is the folder, inside .ai-session, of the screens' records.
const ScreensDir = "screens"

// The kinds of screen a record names.
const (
	ScreenRoom = "room" // a terminal room (relay-baton chat)
	ScreenPage = "page" // the page of relay-baton serve
)

// screenRecord is .ai-session/screens/<session id>.json.
type screenRecord struct {
	Kind string `json:"kind"` // ScreenRoom or ScreenPage
	Name string `json:"name"` // "relay-baton chat", "relay-baton serve's page"
	PID  int    `json:"pid"`
}

// Other is an event another process appended to the conversation log.
type Other struct {
	Event events.Event
	// Screen is the kind of screen that wrote it (ScreenRoom,
	// ScreenPage), "" when it left no record.
	Screen string
}

// From is where the event came from, for its label: "page", "another
// room", or "another relay-baton process".
func (o Other) From() string {
	switch o.Screen {
	case ScreenPage:
		return "page"
	case ScreenRoom:
		return "another room"
	}
	return "another relay-baton process"
}

// Text is the event as a terminal shows it: "page: [ts] who kind: text",
// in the form of the resume recap (replay.FormatEvent: every string made
// inert), continuation lines indented under it.
func (o Other) Text(color bool) string {
	line := strings.TrimPrefix(replay.FormatEvent(0, o.Event, color), "0. ")
	return render.InertLine(o.From()) + ": " + line
}

// screenPath is the record of session's screen in the session folder sd
// ("" outside a repository).
func screenPath(sd, session string) string {
	if sd == "" {
		return ""
	}
	return filepath.Join(sd, ScreensDir, session+".json")
}

// announceScreen records the screen of session (kind ScreenRoom or
// ScreenPage, name as the run lock names it) in sd for the other
// screens' labels, and returns what removes the record (the screen is
// closing). A failure to write it costs only the label.
func announceScreen(sd, session, kind, name string) (forget func()) {
	p := screenPath(sd, session)
	if p == "" {
		return func() {}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return func() {}
	}
	if err := events.NoLinkBelow(sd, filepath.Dir(p)); err != nil {
		return func() {}
	}
	b, _ := json.Marshal(screenRecord{Kind: kind, Name: name, PID: os.Getpid()})
	if err := workspace.WriteFile(p, b); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(p) }
}

// screenOf reads the kind of screen session's record in sd names (""
// when there is none or it cannot be read).
func screenOf(sd, session string) string {
	if conversation.ValidSessionID(session) != nil { // log content: nothing else becomes a path
		return ""
	}
	p := screenPath(sd, session)
	if p == "" {
		return ""
	}
	b, err := events.ReadOwned(p, 4096)
	if err != nil {
		return ""
	}
	var r screenRecord
	if json.Unmarshal(b, &r) != nil {
		return ""
	}
	switch r.Kind {
	case ScreenRoom, ScreenPage:
		return r.Kind
	}
	return ""
}

// others is what the follower hands the engine's goroutine: the events
// of other screens not yet adopted (AdoptOthers).
type others struct {
	mu      sync.Mutex
	pending []events.Event
}

// othersOf holds the queue of each engine that follows the log (an
// engine hosts at most one follower), from FollowOthers until its
// follower ends.
var othersOf sync.Map // *Engine → *others

// FollowOthers follows the conversation log from its end now and hands fn,
// in order and once each, every event another process appends (a page, a
// second terminal room, a one-shot command), until ctx ends; this
// engine's own events are never handed. fn is called from one goroutine.
// The events are also kept for AdoptOthers, which the caller runs where
// the engine is its own (between turns). It records this engine's screen
// as a terminal room's. The returned wait returns once the follower has
// ended (after ctx).
func (e *Engine) FollowOthers(ctx context.Context, fn func(Other)) (wait func()) {
	path := e.LogPath()
	if e.log == nil || path == "" {
		return func() {}
	}
	forget := announceScreen(e.SessionDir, e.SessionID, ScreenRoom, e.screen())
	from := completeEnd(path)
	q := &others{}
	othersOf.Store(e, q)
	screens := map[string]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer othersOf.Delete(e)
		defer forget()
		_ = followOthers(ctx, path, from, e.SessionID, func(ev events.Event) {
			s, ok := screens[ev.SessionID]
			if !ok {
				// A writer without a record is looked for again at its
				// next event (its record may come later).
				if s = screenOf(e.SessionDir, ev.SessionID); s != "" {
					if len(screens) >= 256 {
						clear(screens)
					}
					screens[ev.SessionID] = s
				}
			}
			q.mu.Lock()
			if len(q.pending) < maxPendingOthers {
				q.pending = append(q.pending, ev)
			}
			q.mu.Unlock()
			fn(Other{Event: ev, Screen: s})
		})
	}()
	return func() { <-done }
}

// maxPendingOthers bounds the events kept for AdoptOthers between two
// turns (a runaway writer does not grow the room without end).
const maxPendingOthers = 4096

// followOthers is FollowOthers' loop: the events of path after byte from,
// whole lines only, whose sessionId is not own, each handed to fn once
// (by id: a log replaced by a copy of itself is not shown again).
func followOthers(ctx context.Context, path string, from int64, own string, fn func(events.Event)) error {
	seen := newIDSet(8192)
	_, err := events.Follow(ctx, path, from, func(ev events.Event) error {
		if ev.SessionID == own || !seen.add(ev.ID) {
			return nil
		}
		fn(ev)
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// completeEnd is the offset just past the log's last whole line: a line
// another process is writing as the room starts is read once it is whole.
func completeEnd(path string) int64 {
	f, err := events.OpenRegular(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0
	}
	end := fi.Size()
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return end
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1
		}
		if end-pos > events.MaxReadLineBytes { // a line too long to be an event
			return end
		}
	}
	return 0
}

// idSet remembers the last n ids it was given.
type idSet struct {
	m    map[string]struct{}
	ring []string
	next int
}

func newIDSet(n int) *idSet { return &idSet{m: map[string]struct{}{}, ring: make([]string, n)} }

// add reports whether id is new, remembering it.
func (s *idSet) add(id string) bool {
	if id == "" {
		return true
	}
	if _, ok := s.m[id]; ok {
		return false
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.m[id] = struct{}{}
	return true
}

// AdoptOthers takes into the engine what other screens' turns changed
// since the last call: the last run (/status, the panel), what runs cost
// (/costs, /budget), the agents' conversations (the next run of an agent
// continues the conversation another screen's run continued, and a /new
// there forgets it here), and the executor's pending run (adoptRun). It does not switch the active agent:
// the prompt names the agent a typed line goes to, and only the person at
// this screen changes it. Call it where the engine is not running a
// command (before one, or from the prompt's panel).
func (e *Engine) AdoptOthers() {
	v, ok := othersOf.Load(e)
	if !ok {
		return
	}
	q := v.(*others)
	q.mu.Lock()
	evs := q.pending
	q.pending = nil
	q.mu.Unlock()
	work := false
	for i := range evs {
		adoptOther(e, &evs[i])
		switch evs[i].Kind {
		case events.KindAgentRun, events.KindExecute, events.KindChanges, events.KindCommand:
			work = true // an executor run, an /apply or an /undo may have been there
		}
	}
	if work {
		adoptRun(e)
	}
}

// adoptRun takes the repository's executor runs as another screen left
// them: this room's run that was applied or discarded there is no longer
// pending here, and a pending run another screen's executor left becomes
// this room's, as a resume brings it back (/diff, /apply, /undo, the
// panel).
func adoptRun(e *Engine) {
	if !e.worktreeMode() {
		return
	}
	ctx := context.Background()
	if r := e.run; r != nil && !r.Reserved() {
		now, err := runs.Load(e.Root, r.ID)
		switch {
		case err != nil: // discarded there: its record is gone
			e.run, e.pendingFiles = nil, 0
			if e.work != nil && e.work.Run == r.ID {
				e.work = nil
			}
		case now.State == runs.Pending:
			e.UseRun(ctx, now)
		case now.State != r.State:
			e.run, e.pendingFiles = now, 0
		}
	}
	if e.Pending() == nil {
		e.resumeRun(ctx)
	}
}

// adoptOther is AdoptOthers for one event.
func adoptOther(e *Engine, ev *events.Event) {
	switch ev.Kind {
	case events.KindAgentRun:
		r := resume.NewReader()
		if r.Take(*ev) != nil {
			return
		}
		rs := r.State()
		if rs.LastRun == nil {
			return // it did not run
		}
		e.last = rs.LastRun
		for _, c := range rs.Costs.Latest {
			e.spent.Costs.Add(c, resume.LatestCosts)
		}
		if c, ok := rs.Conversations[rs.LastRun.Agent]; ok {
			if e.convs == nil {
				e.convs = map[string]*AgentConversation{}
			}
			e.convs[rs.LastRun.Agent] = &AgentConversation{ID: c.ID, Turns: c.Turns, InputTokens: c.InputTokens, Reported: c.Reported}
		}
	case events.KindStatus:
		m, err := events.MetaOf[events.StatusMeta](ev)
		if err == nil && (m.NewConversation == agents.Claude || m.NewConversation == agents.Codex) {
			delete(e.convs, m.NewConversation)
		}
	}
}

// key tells one holder from the next ("" for none).
func (h *RunHolder) key() string {
	if h == nil {
		return ""
	}
	return strings.Join([]string{h.Agent, h.Command, h.Screen, h.Started.Format(time.RFC3339Nano), strconv.Itoa(h.PID)}, "\x00")
}

// HeldKey is a token that changes when the repository's run lock changes
// hands ("" when no run holds it); for a screen that redraws its panel
// then.
func HeldKey(root string) string { return RunHeldBy(root).key() }
