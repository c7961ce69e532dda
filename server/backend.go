package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/transcript"
)

// ErrConflict is returned (wrapped) for a session that exists but cannot
// take a message now (not chat-capable); the server answers 409.
var ErrConflict = errors.New("conflict")

// Workspace is the Backend over the session-chat file protocol of one
// workspace: the same conversation package the room and the CLI use, so a
// message sent here and one sent from the room share one queue.
type Workspace struct {
	Dir string
	// ctx bounds the background watchers that record replies in log.jsonl.
	ctx context.Context
	wg  sync.WaitGroup

	mu        sync.Mutex
	recorders map[string][]conversation.Receipt // per session: sent, reply not recorded yet
}

// NewWorkspace returns the backend for workspace dir. Background reply
// watchers stop when ctx ends.
func NewWorkspace(ctx context.Context, dir string) *Workspace {
	return &Workspace{Dir: dir, ctx: ctx}
}

// Wait waits for background reply watchers (after ctx ends).
func (w *Workspace) Wait() { w.wg.Wait() }

// Targets lists the workspace's sessions, the lead first; ctx ends its
// read of Claude Code's registry.
func (w *Workspace) Targets(ctx context.Context) ([]Target, error) {
	ts, err := conversation.ListTargetsContext(ctx, w.Dir, false)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Target, 0, len(ts))
	for _, t := range ts {
		x := Target{
			ID: t.SessionID, Lead: t.Lead, ChatCapable: t.ChatCapable, QueueDepth: t.Depth,
			LastActivity: t.LastActivity, TranscriptPath: t.TranscriptPath, Cwd: t.Cwd,
			State: t.Status(), Delivers: t.Delivers, NeedsUser: t.NeedsUser,
		}
		if !t.Oldest.IsZero() {
			x.OldestAgeMs = max(now.Sub(t.Oldest).Milliseconds(), 0)
		}
		out = append(out, x)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Lead && !out[j].Lead })
	return out, nil
}

func (w *Workspace) open(id string) (*conversation.Session, error) {
	s, err := conversation.OpenSession(w.Dir, id)
	if err != nil {
		if errors.Is(err, conversation.ErrBadSessionID) {
			return nil, fmt.Errorf("%w: %w", ErrUnknownSession, err)
		}
		if errors.Is(err, conversation.ErrSymlink) {
			return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		return nil, err
	}
	if !s.ChatCapable() && conversation.LocateTranscript(s) == "" && !s.Listed() {
		return nil, fmt.Errorf("%w: no chat folder or transcript for session %s in %s", ErrUnknownSession, id, w.Dir)
	}
	return s, nil
}

// Check reports whether id is a session of this workspace.
func (w *Workspace) Check(id string) error {
	_, err := w.open(id)
	return err
}

// Log returns the session's chat log (log.jsonl, a cache of what was sent
// and answered), oldest first, at most the newest 500 entries. Damaged
// lines are skipped, and so is a line over chatlog.MaxLine (read
// past, not into memory): the entries after it still come.
func (w *Workspace) Log(id string) ([]LogEntry, error) {
	es, _, err := w.LogSkipped(id)
	return es, err
}

// LogSkipped is Log, with the number of lines skipped (damaged or over the
// cap).
func (w *Workspace) LogSkipped(id string) ([]LogEntry, int, error) {
	s, err := w.open(id)
	if err != nil {
		return nil, 0, err
	}
	out, skipped, err := s.ReadLogCounted(500)
	for i := range out {
		out[i].Text = render.Inert(out[i].Text) // the page shows it; so may a terminal (curl)
	}
	return out, skipped, err
}

// Send enqueues text for session id and, in the background, follows the
// message to its reply so the reply lands in log.jsonl. ctx (the request's)
// ends the hand-over to the session's socket or Codex thread: the message
// then stays queued for its other lanes.
func (w *Workspace) Send(ctx context.Context, id, from, text string) (Sent, error) {
	if _, err := w.open(id); err != nil {
		return Sent{}, err
	}
	r, err := conversation.SendContext(ctx, w.Dir, id, from, text)
	if err != nil {
		switch {
		case errors.Is(err, conversation.ErrTooLarge), errors.Is(err, conversation.ErrEmpty), errors.Is(err, conversation.ErrNUL), errors.Is(err, conversation.ErrNotUTF8):
			return Sent{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
		case errors.Is(err, conversation.ErrNotChatReady):
			return Sent{}, fmt.Errorf("%w: %w", ErrConflict, err)
		}
		return Sent{}, err
	}
	st, _ := r.Session.State(r.Message.ID)
	w.record(id, r)
	return Sent{ID: r.Message.ID, CreatedAt: r.Message.CreatedAt, Ahead: st.Ahead}, nil
}

// record follows r to its reply so that the reply lands in log.jsonl. One
// recorder per session (so one set of watchers, however many messages wait
// there): it follows the session's messages one after the other, in the
// order they were sent (the order they are delivered), and ends when none
// is left.
func (w *Workspace) record(session string, r conversation.Receipt) {
	if w.ctx == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recorders == nil {
		w.recorders = map[string][]conversation.Receipt{}
	}
	q, running := w.recorders[session]
	w.recorders[session] = append(q, r)
	if running {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			w.mu.Lock()
			q := w.recorders[session]
			if len(q) == 0 || w.ctx.Err() != nil {
				delete(w.recorders, session) // idle: its watchers are gone
				w.mu.Unlock()
				return
			}
			next := q[0]
			w.mu.Unlock()
			ctx, cancel := context.WithCancel(w.ctx)
			_ = conversation.Watch(ctx, next, conversation.WatchOptions{}, func(u conversation.Update) {
				if u.Kind == conversation.UpdUnconfirmed {
					cancel() // not answered in time: follow the next one
				}
			})
			cancel()
			w.mu.Lock()
			w.recorders[session] = w.recorders[session][1:]
			w.mu.Unlock()
		}
	}()
}

// Recording reports how many sent messages of session wait for their reply
// to be recorded, and whether a recorder runs for it.
func (w *Workspace) Recording(session string) (pending int, running bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q, ok := w.recorders[session]
	return len(q), ok
}

// Watch streams the session's chat activity: queue depth changes,
// deliveries (from delivered/), and what the session does (from its
// transcript, followed from its current end).
func (w *Workspace) Watch(ctx context.Context, id string, ready func(), fn func(Event)) error {
	s, err := w.open(id)
	if err != nil {
		ready()
		return err
	}
	var mu sync.Mutex
	emit := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		fn(e)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ready once both have their starting points.
	var started sync.WaitGroup
	started.Add(2)
	go func() {
		started.Wait()
		ready()
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.followTranscript(ctx, s, started.Done, emit)
	}()
	err = w.watchQueue(ctx, s, started.Done, emit)
	cancel()
	wg.Wait()
	return err
}

// followTranscript maps transcript activity onto panel events. A missing
// transcript is looked for again every second.
func (w *Workspace) followTranscript(ctx context.Context, s *conversation.Session, started func(), emit func(Event)) {
	path := conversation.LocateTranscript(s)
	var offset int64
	if path != "" {
		offset = transcript.Size(path)
	}
	started() // a transcript found later is all new: it is read from its start
	for path == "" {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		path = conversation.LocateTranscript(s)
	}
	err := transcript.Tail(ctx, transcript.TailOptions{
		Path: path, Offset: offset, Follow: true,
		OnActivity: func(_ int64, acts []events.Activity) bool {
			for _, a := range acts {
				if e, ok := panelEvent(a); ok {
					emit(e)
				}
			}
			return true
		},
	})
	if err != nil && ctx.Err() == nil {
		emit(Event{Name: "notice", Data: render.PanelNotice("reply not readable: "+err.Error(), time.Now())})
	}
}

// panelEvent maps one activity onto the panel's SSE vocabulary (the one
// renderer for the page, events/render.Panel).
func panelEvent(a events.Activity) (Event, bool) {
	name, data, ok := render.Panel(a, time.Now())
	return Event{Name: name, Data: data}, ok
}

// watchQueue reports queue depth changes and new deliveries until ctx ends
// (watchQueueOf reads the inbox and delivered/).
func (w *Workspace) watchQueue(ctx context.Context, s *conversation.Session, started func(), emit func(Event)) error {
	return watchQueueOf(ctx, s, started, func(u queueUpdate) {
		if m := u.delivered; m != nil {
			emit(Event{Name: "delivered", Data: map[string]any{"id": m.ID, "lane": m.Lane, "at": m.DeliveredAt}})
			return
		}
		emit(Event{Name: "queued", Data: map[string]any{"depth": u.depth, "ahead": max(u.depth-1, 0)}})
	})
}
