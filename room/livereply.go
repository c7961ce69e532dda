package room

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
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
func (e *Engine) followLater(r conversation.Receipt, began time.Time) string {
	l := e.live
	if l == nil || l.ctx.Err() != nil {
		return ""
	}
	l.mu.Lock()
	if l.n >= maxLive {
		l.mu.Unlock()
		return ""
	}
	l.n++
	l.wg.Add(1)
	l.mu.Unlock()
	confirm := e.chat.confirmWithin
	if confirm <= 0 {
		confirm = DefaultChatConfirm
	}
	opts := conversation.WatchOptions{ConfirmWithin: confirm, Poll: e.chat.poll}
	go func() {
		defer func() {
			l.mu.Lock()
			l.n--
			l.mu.Unlock()
			l.wg.Done()
		}()
		res, _ := conversation.Follow(l.ctx, r, opts, true, func(conversation.Update) {})
		if res.Outcome != conversation.Replied || l.ctx.Err() != nil {
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
		e.out.mu.Lock()
		t := render.NewTerminal(&b, e.out.color)
		t.SetMarkdown(true)
		t.SetWidth(e.out.width)
		e.out.mu.Unlock()
		t.Lines(events.RoleRelayBaton, fmt.Sprintf("reply to message %s (session %s), after the room stopped waiting:", r.Message.ID, short8(r.Session.ID)))
		t.Lines(events.RoleOrchestrator, text)
		t.EndLine()
		l.print(b.Bytes())
		e.logReply(r, res, path, began)
	}()
	return " The room shows its reply here when it comes."
}
