package chatlane

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
)

// This file follows, in the background, a chat message the room stopped
// waiting for (Ctrl-C): its reply, when it comes, is printed above the
// prompt (readline's line kept intact) and logged once, as the foreground
// wait would have.

// maxLive bounds the messages followed in the background at once.
const maxLive = 8

// liveReplies is the REPL's background followers.
type liveReplies struct {
	ctx   context.Context // ends when the room exits
	print func([]byte)    // writes above the prompt
	mu    sync.Mutex
	n     int
	wg    sync.WaitGroup
}

// followLater follows message r in the background when the REPL runs,
// and returns what to add to the "stopped waiting" line ("" when it does
// not follow it).
func (l *Lane) followLater(r conversation.Receipt, began time.Time) string {
	lr := l.live
	if lr == nil || lr.ctx.Err() != nil {
		return ""
	}
	lr.mu.Lock()
	if lr.n >= maxLive {
		lr.mu.Unlock()
		return ""
	}
	lr.n++
	lr.wg.Add(1)
	lr.mu.Unlock()
	confirm := l.ConfirmWithin
	if confirm <= 0 {
		confirm = DefaultChatConfirm
	}
	opts := conversation.WatchOptions{ConfirmWithin: confirm, Poll: l.Poll}
	go func() {
		defer func() {
			lr.mu.Lock()
			lr.n--
			lr.mu.Unlock()
			lr.wg.Done()
		}()
		res, _ := conversation.Follow(lr.ctx, r, opts, true, func(conversation.Update) {})
		if res.Outcome != conversation.Replied || lr.ctx.Err() != nil {
			return
		}
		path := r.TranscriptPath
		if path == "" {
			path = conversation.LocateTranscript(r.Session)
		}
		text := res.Reply
		if text == "" {
			text = "(the session's turn ended without reply text)"
		}
		var b bytes.Buffer
		t := l.d.Screen.Terminal(&b)
		t.Lines(events.RoleRelayBaton, fmt.Sprintf("reply to message %s (session %s), after the room stopped waiting:", r.Message.ID, short8(r.Session.ID)))
		t.Lines(events.RoleOrchestrator, text)
		t.EndLine()
		lr.print(b.Bytes())
		l.logReply(r, res, path, began)
	}()
	return " The room shows its reply here when it comes."
}

// FollowReplies has chat replies the room stopped waiting for (Ctrl-C)
// followed in the background until ctx ends: each is handed to print when
// it comes (above the prompt) and logged once. The returned wait ends the
// followers' bookkeeping once ctx is done and they have returned.
func (l *Lane) FollowReplies(ctx context.Context, print func([]byte)) (wait func()) {
	lr := &liveReplies{ctx: ctx, print: print}
	l.live = lr
	return func() {
		lr.wg.Wait()
		l.live = nil
	}
}
