package conversation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/transcript"
)

// waitClaim blocks until it claims a message for lane and returns it. With
// respectBusy it claims only while the session is not in a turn (no fresh
// busy mark), so idle-lane deliveries happen at turn boundaries. It watches
// the inbox and the session folder with fsnotify (poll is the fallback and
// the re-check interval for an expiring busy mark; default 2 s). It returns
// ctx.Err() when ctx ends first; it never claims after that, so a timed-out
// waiter strands nothing.
func (s *Session) waitClaim(ctx context.Context, lane Lane, respectBusy bool, poll time.Duration) (ClaimResult, error) {
	return s.waitClaimWith(ctx, lane, respectBusy, poll, ClaimOptions{})
}

// waitClaimWith is waitClaim with claim options: with o.Handover the caller
// hands the message over and then calls res.Delivered (see ClaimWith).
func (s *Session) waitClaimWith(ctx context.Context, lane Lane, respectBusy bool, poll time.Duration, o ClaimOptions) (ClaimResult, error) {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	if err := checkSession(s); err != nil {
		return ClaimResult{}, err
	}
	var wake <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer closeWatcher(w)
		if w.Add(s.InboxDir()) == nil {
			_ = w.Add(s.dir) // the busy mark's removal
			wake = w.Events
		}
	} else {
		poll = min(poll, time.Second)
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	var rejected []Rejected
	for {
		if ctx.Err() != nil {
			return ClaimResult{Rejected: rejected}, ctx.Err()
		}
		if (!respectBusy || !s.Busy(time.Now())) && (o.Prefer == nil || !o.Prefer()) {
			res, err := s.ClaimWith(lane, o)
			if res.OK && !o.Handover {
				res.Delivered()
			}
			rejected = append(rejected, res.Rejected...)
			res.Rejected = rejected
			if err != nil || res.OK {
				return res, err
			}
		}
		select {
		case <-ctx.Done():
			return ClaimResult{Rejected: rejected}, ctx.Err()
		case <-ticker.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		}
	}
}

// ViaLane says how a message came: "via hook", or "(lane not recorded)"
// for a record without one, never an empty word.
func ViaLane(l Lane) string {
	if l == "" {
		return "(lane not recorded)"
	}
	return "via " + string(l)
}

// laneName is a lane for a message: never an empty word.
func laneName(l Lane) string {
	if l == "" {
		return "an unknown lane"
	}
	return "the " + string(l) + " lane"
}

// Receipt is what Send returns: the message, and where its reply will show.
type Receipt struct {
	Session        *Session
	Message        Message
	TranscriptPath string // "" when the transcript could not be located
	Offset         int64  // the transcript's size at send time
	// QueueErr: the queue lane (a Codex thread) could not hand the message
	// over; it stays queued.
	QueueErr error
	// SocketErr: the session has a messaging socket but it did not take
	// the message (refused, gone, not a socket): the message stays queued
	// for the Stop hook and the asyncRewake waiter.
	SocketErr error
	// Behind: the message waits in the inbox until this earlier message is
	// answered (one message per turn boundary, errAwaitingAnswer).
	Behind string
}

// Send is SendContext without a context, for a caller that has none: its
// registry read and hand-over end only by their own timeouts.
func Send(ws, sessionID, from, text string) (Receipt, error) {
	return SendContext(context.Background(), ws, sessionID, from, text)
}

// SendContext validates the session, records the transcript offset and
// enqueues text. It is the one entry point for the CLI, the room and the
// server. ctx bounds what blocks: the read of Claude Code's registry, the
// post to a messaging socket and the hand-over to a Codex thread (`codex
// queue`, the steer); when it ends first the message stays queued for the
// session's other lanes (QueueErr or SocketErr says so, wrapping ctx.Err()).
func SendContext(ctx context.Context, ws, sessionID, from, text string) (Receipt, error) {
	s, err := OpenSession(ws, sessionID)
	if err != nil {
		return Receipt{}, err
	}
	path := LocateTranscript(s)
	if !s.ChatCapable() && !transcript.IsRolloutPath(path) {
		// Not hooked: a session Claude Code's registry lists is reached
		// without hooks (its socket); relay-baton makes its own queue.
		if l, ok, _ := claudecode.FindSession(ctx, s.ID); ok {
			if err := adopt(s, l); err != nil {
				return Receipt{}, err
			}
			if path == "" {
				path = LocateTranscript(s)
			}
		}
	}
	if _, err := os.Lstat(s.Dir()); path == "" && errors.Is(err, fs.ErrNotExist) {
		return Receipt{}, fmt.Errorf("%w %s in %s (neither a chat folder nor a transcript): 'relay-baton targets' lists the sessions there", errNoSession, sessionID, ws)
	}
	off := transcript.Size(path)
	isCodex := transcript.IsRolloutPath(path)
	if isCodex && s.codexTUIQuit() {
		return Receipt{}, EndedError(s)
	}
	if isCodex && !s.ChatCapable() && codex.Loaded(s.ID) {
		// A running Codex thread without the hooks: the queue lane reaches it.
		if err := s.Ensure(); err != nil {
			return Receipt{}, err
		}
	}
	m, err := s.Enqueue(from, text)
	if err != nil {
		return Receipt{}, err
	}
	_ = s.AppendLog(chatlog.Entry{At: m.CreatedAt, Role: "user", Text: m.Text, ID: m.ID, Source: m.From})
	r := Receipt{Session: s, Message: m, TranscriptPath: path, Offset: off}
	if isCodex {
		// Idle and loaded (queue) or in a turn on the daemon (steer): hand
		// it over now. An error leaves it queued for the Stop hook
		// (recorded in errors.log).
		_, r.QueueErr = deliverCodex(ctx, s)
	} else {
		_, err := s.deliverSocket(ctx, path)
		r.SocketErr = socketFailure(0, err)
		if errors.Is(err, errAwaitingAnswer) {
			// A hook lane may have taken this very message meanwhile: it
			// then waits behind nothing.
			if b, ok := s.awaitingAnswer(time.Now(), mayRun); ok && b != m.ID {
				r.Behind = b
			}
		}
	}
	return r, nil
}

// socketFailure is the error of a socket lane that was tried and failed;
// nil when it worked or when the session has no usable socket (the hook
// lanes are then the lanes, as Reachability says).
func socketFailure(_ int, err error) error {
	if err == nil || errors.Is(err, errNoSocket) || errors.Is(err, ErrSocketHeld) || errors.Is(err, errAwaitingAnswer) {
		return nil
	}
	return err
}

// UpdateKind says what changed for a sent message.
type UpdateKind string

// The update kinds, in the order they usually come.
const (
	UpdQueued    UpdateKind = "queued"    // in the inbox, Ahead messages before it
	UpdCancelled UpdateKind = "cancelled" // gone from the inbox without being delivered
	// UpdPosted: posted to the session's messaging socket at At; the
	// socket answers nothing, so it is not delivered until the transcript
	// shows it (then UpdDelivered).
	UpdPosted UpdateKind = "posted"
	// UpdRequeued: a socket post did not show in the transcript within
	// the claim grace: the message is back in the inbox, first in line, for
	// the Stop hook and the rewake waiter, and the socket lane is off for
	// the session process (Err says so).
	UpdRequeued    UpdateKind = "requeued"
	UpdDelivered   UpdateKind = "delivered"   // handed over by Lane at At (a hook's output), or a socket post the transcript shows
	UpdConfirmed   UpdateKind = "confirmed"   // the delivery shows in the transcript; Lane: the lane it shows as
	UpdUnconfirmed UpdateKind = "unconfirmed" // claimed, but not seen in the transcript in time
	UpdActivity    UpdateKind = "activity"    // the session did something after the delivery
	UpdDone        UpdateKind = "done"        // end of the turn that answered; Reply = outbox text if any
	UpdUnreadable  UpdateKind = "unreadable"  // delivered, reply not readable (no transcript)
	UpdIncomplete  UpdateKind = "incomplete"  // claimed, but its claimer died before handing it over: delivered again
	// UpdDuplicate: the transcript shows the message a second time (a
	// socket post put back showed late, after another lane delivered it);
	// it counts once (Err says which lanes).
	UpdDuplicate UpdateKind = "duplicate"
	// UpdUnseen: a Codex thread's TUI quit and a codex app-server daemon
	// answered the message in a turn no terminal shows (Err says so and
	// how to see it).
	UpdUnseen UpdateKind = "unseen"
)

// Update is one change of a sent message's state or one activity of its
// reply.
type Update struct {
	Kind     UpdateKind
	Ahead    int
	Lane     Lane
	At       time.Time
	Activity events.Activity
	Reply    string
	Err      error
}

// WatchOptions tunes Watch.
type WatchOptions struct {
	// ConfirmWithin is how long after a hook lane's hand-over the delivery
	// may take to show in the transcript before UpdUnconfirmed is sent
	// (default 30 s). A socket post gets claimGrace, then is put back in
	// the inbox (UpdRequeued).
	ConfirmWithin time.Duration
	Poll          time.Duration // fallback re-check interval (default 1 s)
	// BlockSettle is how long, after a line that ends a message, more
	// lines of that message may take before the turn ends without a
	// stored reply (default 150 ms).
	BlockSettle time.Duration
}

// Watch follows a sent message: UpdQueued (each time the number ahead
// changes); UpdDelivered when a hook lane hands it over, or UpdPosted when
// it is posted to the socket and UpdDelivered once the transcript shows it
// (a post that does not show within claimGrace is put back in the inbox:
// UpdRequeued, then the next lane's UpdDelivered); then, from the
// transcript, UpdConfirmed, the reply's UpdActivity updates and UpdDone at
// end of turn. fn is never called concurrently. It returns nil after
// UpdDone, UpdCancelled or UpdUnreadable, or ctx.Err() when ctx ends first
// (the message stays where it is).
func Watch(ctx context.Context, r Receipt, opts WatchOptions, fn func(Update)) error {
	if opts.ConfirmWithin <= 0 {
		opts.ConfirmWithin = 30 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.BlockSettle <= 0 {
		opts.BlockSettle = 150 * time.Millisecond
	}
	var mu sync.Mutex
	finished := false
	emit := func(u Update) {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			fn(u)
		}
	}
	defer func() { // no call of fn after Watch returns (the lanes' goroutine)
		mu.Lock()
		finished = true
		mu.Unlock()
	}()
	s, id := r.Session, r.Message.ID
	nudge := deliveryNudge(ctx, r)
	m, err := waitDelivered(ctx, s, id, opts.Poll, emit, nudge)
	if err != nil || m == nil {
		return err
	}
	path := r.TranscriptPath
	if path == "" {
		path = waitTranscript(ctx, s, opts.ConfirmWithin, opts.Poll)
	}
	w := &delivery{s: s, id: id, path: path, offset: r.Offset, opts: opts, emit: emit, confirmedCh: make(chan struct{})}
	w.announce(m)
	if path == "" {
		// Nothing to confirm from: a hook lane's hand-over stands (its own
		// output); a socket post goes back to the inbox for them.
		for m.Lane == LaneSocket && claimState(s, id) != claimNone {
			if m, err = w.settleSocket(ctx, m); err != nil || m == nil {
				return err
			}
		}
		emit(Update{Kind: UpdUnreadable, Err: errors.New("the session's transcript could not be located: delivered " + ViaLane(m.Lane) + ", reply not readable")})
		return nil
	}
	tctx, endTail := context.WithCancel(ctx)
	defer endTail()
	w.endTail = endTail // the message left the inbox undelivered
	wctx, stopLanes := context.WithCancel(ctx)
	defer stopLanes()
	lanesDone := make(chan struct{})
	go func() {
		defer close(lanesDone)
		w.supervise(wctx, m)
	}()
	defer func() { stopLanes(); <-lanesDone }()
	t := &turnReader{w: w, opts: opts}
	err = transcript.Tail(tctx, transcript.TailOptions{Path: path, Offset: r.Offset, Follow: true, Poll: opts.Poll,
		OnCaughtUp: func() (bool, time.Duration) { return t.caughtUp(ctx) },
		OnActivity: func(_ int64, acts []events.Activity) bool { return t.activities(ctx, acts) }})
	if err != nil {
		emit(Update{Kind: UpdUnreadable, Err: fmt.Errorf("delivered, reply not readable: %w", err)})
		return nil
	}
	if !t.done && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// delivery is Watch's view of one message between its first claim and the
// transcript's confirmation.
type delivery struct {
	s      *Session
	id     string
	path   string
	offset int64
	opts   WatchOptions
	emit   func(Update)
	// endTail ends Watch's reading of the transcript (the message was
	// cancelled while back in the inbox).
	endTail func()

	mu          sync.Mutex
	confirmed   bool
	confirmedCh chan struct{}
	told        bool // UpdDelivered was sent
	lane        Lane // the lane of the current claim
	confirmLane Lane // the lane the first showing was by
}

// announce says how m left the inbox: posted to the socket (not yet
// delivered), or handed over by a hook lane.
func (w *delivery) announce(m *Message) {
	at := time.Now()
	if m.DeliveredAt != nil {
		at = *m.DeliveredAt
	}
	w.mu.Lock()
	w.lane = m.Lane
	tell := !w.told && m.Lane != LaneSocket
	if tell {
		w.told = true
	}
	w.mu.Unlock()
	if m.Lane == LaneSocket {
		w.emit(Update{Kind: UpdPosted, Lane: m.Lane, At: at})
		return
	}
	if tell {
		w.emit(Update{Kind: UpdDelivered, Lane: m.Lane, At: at})
	}
}

func (w *delivery) isConfirmed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.confirmed
}

// shown is a transcript line that shows the message: the first confirms
// it (and, for a socket post, is its delivery); a later one is a second
// arrival, reported and never counted.
func (w *delivery) shown(a events.Activity) {
	lane := Lane(a.Detail)
	w.mu.Lock()
	first := !w.confirmed
	if lane == "" {
		lane = w.lane
	}
	tell := first && !w.told
	if first {
		w.confirmed, w.confirmLane = true, lane
		w.told = true
		close(w.confirmedCh)
	}
	was := w.confirmLane
	w.mu.Unlock()
	at := a.Time
	if at.IsZero() {
		at = time.Now()
	}
	if !first {
		err := fmt.Errorf("message %s reached the session a second time (%s, after %s): an earlier post showed late; it is counted once", w.id, ViaLane(lane), ViaLane(was))
		w.s.RecordError(err)
		w.emit(Update{Kind: UpdDuplicate, Lane: lane, At: at, Err: err})
		return
	}
	confirmClaim(w.s, w.id)
	if tell {
		w.emit(Update{Kind: UpdDelivered, Lane: lane, At: at})
	}
	w.emit(Update{Kind: UpdConfirmed, Lane: lane, At: at})
}

// supervise waits for the confirmation of the claim m: a socket post that
// does not show within claimGrace goes back to the inbox and the next
// lane's claim is followed; a hook lane's hand-over that does not show
// within ConfirmWithin is reported (UpdUnconfirmed).
func (w *delivery) supervise(ctx context.Context, m *Message) {
	for m != nil {
		if m.Lane != LaneSocket {
			select {
			case <-ctx.Done():
			case <-w.confirmedCh:
			case <-time.After(w.opts.ConfirmWithin):
				w.emit(Update{Kind: UpdUnconfirmed, Err: fmt.Errorf("message %s was claimed by %s but has not shown in the transcript within %s", w.id, m.Lane, w.opts.ConfirmWithin)})
			}
			return
		}
		if claimState(w.s, w.id) == claimNone {
			return // its earlier post showed (counted at the claim): the transcript confirms it
		}
		var err error
		if m, err = w.settleSocket(ctx, m); err != nil {
			return
		}
	}
}

// settleSocket waits out the socket post m's grace; if the transcript has
// not shown it by then (nor Claude Code's queue), the message goes back to
// the inbox (UpdRequeued) and settleSocket waits for the next lane's claim
// and returns it (nil when it is confirmed meanwhile or leaves the inbox).
func (w *delivery) settleSocket(ctx context.Context, m *Message) (*Message, error) {
	at := time.Now()
	if m.DeliveredAt != nil {
		at = *m.DeliveredAt
	}
	wait := time.Until(at.Add(claimGrace()))
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.confirmedCh:
			return nil, nil
		case <-time.After(max(wait, 0)):
		}
		if w.path != "" && claudecode.EnqueuedInTranscript(w.path, w.offset, w.id) {
			return nil, nil // in the session's queue until its next tool result
		}
		settleSocketPost(w.s, w.id)
		st, err := w.s.State(w.id)
		if err != nil {
			return nil, nil
		}
		if st.Queued || st.Delivered != nil && st.Delivered.Lane != LaneSocket {
			break // put back (here or by another lane's recoverClaims)
		}
		wait = w.opts.Poll // its marker is busy for a moment: look again
	}
	// The post was put back: said even when another lane's delivery has
	// shown meanwhile (it came by that lane because of it).
	why := "the session never showed it"
	if w.path == "" {
		why = "the session's transcript cannot be read to confirm it"
	}
	w.emit(Update{Kind: UpdRequeued, Lane: LaneSocket, Err: fmt.Errorf("message %s was posted to the session's messaging socket, but %s within %s: it is back in the inbox, first in line, for the Stop hook and the rewake waiter (the socket lane is off for this session process)", w.id, why, claimGrace())})
	if w.isConfirmed() {
		return nil, nil
	}
	next, err := waitDelivered(ctx, w.s, w.id, w.opts.Poll, w.emit, nil)
	if err != nil || next == nil {
		if err == nil && w.endTail != nil {
			w.endTail() // cancelled: nothing more to read for it
		}
		return nil, err
	}
	if w.isConfirmed() {
		return nil, nil
	}
	w.announce(next)
	return next, nil
}

// deliveryNudge is what Watch does each time a message it follows still
// waits in the inbox: nothing for a session only the hooks reach (nil).
func deliveryNudge(ctx context.Context, r Receipt) func() {
	s := r.Session
	if transcript.IsRolloutPath(r.TranscriptPath) {
		// A Codex thread: while the message waits, the queue lane delivers
		// it as soon as the thread is idle (a Stop hook may have run just
		// before it was queued), the steer lane while a turn runs on the
		// daemon.
		return func() { _, _ = deliverCodex(ctx, s) }
	}
	if _, err := socketLane(s, ctx, procfacts.System, mayRun); err != nil {
		return nil
	}
	// A Claude Code session with a messaging socket: a message that waits
	// (behind others, or put back by recoverClaims) is posted as soon as it is
	// first in line. After a failure the hook lanes take it.
	failed := false
	return func() {
		if !failed {
			failed = socketFailure(s.deliverSocket(ctx, r.TranscriptPath)) != nil
		}
	}
}

// waitDelivered reports queue positions until id is delivered (returned)
// or gone (nil, after UpdCancelled).
func waitDelivered(ctx context.Context, s *Session, id string, poll time.Duration, emit func(Update), nudge func()) (*Message, error) {
	var wake <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer closeWatcher(w)
		if w.Add(s.InboxDir()) == nil {
			_ = w.Add(s.DeliveredDir())
			wake = w.Events
		}
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	lastAhead, retries := -1, 0
	toldIncomplete := false
	for {
		st, err := s.State(id)
		switch {
		case errors.Is(err, ErrNotQueued):
			emit(Update{Kind: UpdCancelled})
			return nil, nil
		case err != nil:
			return nil, err
		case st.Incomplete && !st.Stalled && retries < 2000:
			retries++
			// Claimed a moment ago; the claimer is handing it over.
			time.Sleep(5 * time.Millisecond)
			continue
		case st.Incomplete:
			// Its claimer died before handing it over (or is stuck): say
			// so, put it back in the inbox, and follow it there.
			if !toldIncomplete {
				toldIncomplete = true
				emit(Update{Kind: UpdIncomplete, Lane: st.Delivered.Lane, Err: fmt.Errorf("message %s was claimed by %s but not handed over (its claimer died or is stuck): it goes back to the inbox for the next lane", id, laneName(st.Delivered.Lane))})
			}
			if st.Stalled {
				recoverClaims(s)
			}
			lastAhead = -1
		case st.Delivered != nil:
			return st.Delivered, nil
		case st.Ahead != lastAhead:
			lastAhead = st.Ahead
			emit(Update{Kind: UpdQueued, Ahead: st.Ahead})
		}
		if st.Queued && nudge != nil {
			nudge()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		}
	}
}

// Outcome is how following a sent message ended.
type Outcome string

// The outcomes of Follow.
const (
	Replied     Outcome = "replied"     // the turn that answered it ended
	Cancelled   Outcome = "cancelled"   // it left the inbox undelivered
	Unconfirmed Outcome = "unconfirmed" // claimed, never seen in the transcript
	Unreadable  Outcome = "unreadable"  // delivered, the reply cannot be read
	Stopped     Outcome = "stopped"     // ctx ended first; State says where it is
	// SessionEnded: the session's recorded process ended first (State
	// says where the message is: still queued, or delivered unanswered).
	SessionEnded Outcome = "session-ended"
)

// FollowResult is what Follow saw, from "queued" to "end of turn".
type FollowResult struct {
	Outcome     Outcome
	Lane        Lane      // the lane that delivered it ("" before delivery)
	DeliveredAt time.Time // zero before delivery
	Reply       string    // Replied: the outbox reply, else the transcript's text
	Err         error     // Unconfirmed, Unreadable: why
	State       State     // Stopped, SessionEnded: where the message is now
	StateErr    error     // Stopped, SessionEnded: State could not be read
}

// Follow is the one follow state machine: it watches a sent message with
// Watch (fn gets every Update, as Watch gives them) and says how it ended.
// With stopUnconfirmed it stops at UpdUnconfirmed (the room then offers
// /resend); otherwise it keeps reading the transcript.
func Follow(ctx context.Context, r Receipt, opts WatchOptions, stopUnconfirmed bool, fn func(Update)) (FollowResult, error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	p, _ := r.Session.Process()
	alive, gone := procfacts.WhileAlive(wctx, p, procfacts.System, opts.Poll) // ends with the session's process
	defer gone()
	var res FollowResult
	done, cancelled, unconf := false, false, false
	var unreadable error
	err := Watch(alive, r, opts, func(u Update) {
		switch u.Kind {
		case UpdCancelled:
			cancelled = true
		case UpdDelivered:
			res.Lane, res.DeliveredAt = u.Lane, u.At
		case UpdConfirmed:
			res.Lane = u.Lane // the lane the transcript shows it came by
		case UpdDone:
			done, res.Reply = true, u.Reply
		case UpdUnconfirmed:
			unconf, res.Err = true, u.Err
			if stopUnconfirmed {
				stop()
			}
		case UpdUnreadable:
			unreadable = u.Err
		}
		fn(u)
	})
	switch {
	case done:
		res.Outcome = Replied
	case cancelled:
		res.Outcome = Cancelled
	case unconf && (stopUnconfirmed || ctx.Err() == nil):
		res.Outcome = Unconfirmed
	case unreadable != nil:
		res.Outcome, res.Err = Unreadable, unreadable
	case ctx.Err() != nil:
		res.Outcome = Stopped
		res.State, res.StateErr = r.Session.State(r.Message.ID)
	case alive.Err() != nil && wctx.Err() == nil:
		res.Outcome = SessionEnded
		res.State, res.StateErr = r.Session.State(r.Message.ID)
	default:
		return res, err
	}
	return res, nil
}

// Monitor is the Monitor lane (`relay-baton wait`): while the session is not
// in a turn it claims each message and writes its framed text to out as one
// write (through render.Inert when inert: a person reads it, not the Monitor
// tool), reporting inbox files moved aside on errOut. It returns after the
// first message with once, and nil when ctx ends.
func (s *Session) Monitor(ctx context.Context, once, inert bool, out, errOut io.Writer) error {
	for {
		res, err := s.waitClaimWith(ctx, LaneMonitor, true, 0, ClaimOptions{Handover: true})
		for _, r := range res.Rejected {
			fmt.Fprintf(errOut, "relay-baton: moved unreadable inbox file aside (rejected/%s): %s\n", r.Name, r.Reason)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return err
		}
		text := s.Frame(res.Message)
		if inert {
			text = render.Inert(text)
		}
		if _, err := io.WriteString(out, text+"\n"); err != nil {
			// The reader is gone (wait | true): nobody got the message.
			_ = res.abandon(err)
			return fmt.Errorf("wait: the output is closed (%w): message %s put back in the inbox for the next lane", err, res.Message.ID)
		}
		_ = res.Delivered()
		if once {
			return nil
		}
	}
}

// closeWatcher closes an fsnotify watcher in the background: Close waits
// for the watcher's reader to wake (about 8 ms with inotify), which would
// otherwise sit between a claim and its delivery.
func closeWatcher(w *fsnotify.Watcher) { go w.Close() }
