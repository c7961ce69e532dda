package conversation

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/transcript"
)

// turnReader is Watch's reading of the turn that answers a delivered
// message: the activities after the transcript shows the message, up to
// the turn's end.
//
// Claude Code writes each block of the turn's last message as a line of
// its own, every one carrying the message's end_turn, all at once when the
// message ends (measured with 2.1.332): the turn ends at the last of them,
// once the tail has read everything written. A system line's end (and a
// rollout's) is final at once.
type turnReader struct {
	w    *delivery
	opts WatchOptions

	reply      strings.Builder // every text block of the turn
	last       []string        // the text blocks since the turn's last tool call
	lastDone   *events.Activity
	lastDoneAt time.Time
	done       bool
}

// activities takes one line's activities; false ends the tail.
func (t *turnReader) activities(ctx context.Context, acts []events.Activity) bool {
	w := t.w
	for _, a := range acts {
		if a.Kind == events.ActDelivered && strings.Contains(a.Text, w.id) {
			w.shown(a)
			continue
		}
		if !w.isConfirmed() {
			continue
		}
		if a.Kind == events.ActDone {
			if a.StopReason == "end_turn" && !transcript.IsRolloutPath(w.path) {
				t.lastDone, t.lastDoneAt = &a, time.Now()
				continue
			}
			t.finish(ctx, a)
			return false
		}
		if a.Kind != events.ActUsage {
			t.lastDone = nil // more of the turn: its end is further on
		}
		switch a.Kind {
		case events.ActText:
			if t.reply.Len() > 0 {
				t.reply.WriteString("\n")
			}
			t.reply.WriteString(a.Text)
			t.last = append(t.last, a.Text)
		case events.ActTool, events.ActToolResult, events.ActUser:
			t.last = t.last[:0]
		}
		w.emit(Update{Kind: UpdActivity, Activity: a})
	}
	return true
}

// caughtUp is the tail at the end of what is written: a message's end
// stands once nothing more of it came for BlockSettle, or at once when the
// Stop hook (which runs after its lines) stored the reply.
func (t *turnReader) caughtUp(ctx context.Context) (bool, time.Duration) {
	if t.lastDone == nil {
		return true, 0
	}
	if wait := t.opts.BlockSettle - time.Since(t.lastDoneAt); wait > 0 {
		if text, _ := t.w.s.Reply(t.w.id); text == "" {
			return true, min(wait, t.opts.Poll)
		}
	}
	t.finish(ctx, *t.lastDone)
	return false, 0
}

// finish ends the turn at a: the reply is the one the Stop hook stored (a
// moment after the transcript shows the end; the last message whole), or,
// with no hook to come, the transcript's text.
func (t *turnReader) finish(ctx context.Context, a events.Activity) {
	s, id := t.w.s, t.w.id
	t.done = true
	if transcript.IsRolloutPath(t.w.path) && s.codexTUIQuit() {
		t.w.emit(Update{Kind: UpdUnseen, Err: fmt.Errorf("the thread's TUI has quit: a codex app-server daemon answered message %s in a turn no terminal shows (`%s` shows it)", id, s.ResumeCommand())})
	}
	text, _ := s.Reply(id)
	if text == "" && !s.HooklessOnly() {
		text, _ = waitReply(s, ctx, id, replyWait)
	}
	text = lastMessageText(t.last, text)
	if text == "" {
		text = t.reply.String()
	}
	endAnswer(s, id, text)
	logReplyOnce(s, id, text, "transcript")
	t.w.emit(Update{Kind: UpdDone, Activity: a, Reply: text})
}

// lastMessageText is the reply of a turn: the text blocks of its last
// message when they end with the reply a Stop hook stored (Claude Code
// hands the hook the last block alone), else the stored reply.
func lastMessageText(blocks []string, stored string) string {
	all := strings.TrimSpace(strings.Join(blocks, "\n"))
	if stored != "" && all != "" && strings.HasSuffix(all, strings.TrimSpace(stored)) {
		return all
	}
	return stored
}
