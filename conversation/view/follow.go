package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// Follow returns the conversation.Follow callback of `relay-baton send --follow`: a
// line for each step of the delivery (queued, delivered by a lane,
// cancelled, a problem) and the reply's activity through the one terminal
// renderer, until the end of the turn. Error texts may quote a file or a
// transcript: they are made inert.
//
// At the end of the turn the reply (stored by the Stop hook, Update.Reply)
// is shown when the transcript's text did not already show it (the
// transcript is written asynchronously and may lag).
func Follow(w io.Writer, color bool) func(conversation.Update) {
	tr := render.NewTerminal(w, color)
	var shown strings.Builder
	var delivered conversation.Lane
	return func(u conversation.Update) {
		tr.EndLine()
		switch u.Kind {
		case conversation.UpdQueued:
			fmt.Fprintf(w, "queued (%d ahead)\n", u.Ahead)
		case conversation.UpdCancelled:
			fmt.Fprintln(w, "cancelled: the message left the inbox without being delivered")
		case conversation.UpdPosted:
			fmt.Fprintf(w, "posted to the session's messaging socket at %s; delivered once its transcript shows it\n", u.At.Local().Format("15:04:05"))
		case conversation.UpdDelivered:
			delivered = u.Lane
			fmt.Fprintf(w, "delivered %s at %s\n", render.InertLine(conversation.ViaLane(u.Lane)), u.At.Local().Format("15:04:05"))
		case conversation.UpdConfirmed:
			if u.Lane != delivered && u.Lane != "" {
				fmt.Fprintf(w, "the session shows it %s (an earlier post, shown late)\n", render.InertLine(conversation.ViaLane(u.Lane)))
			}
		case conversation.UpdUnconfirmed, conversation.UpdUnreadable, conversation.UpdIncomplete, conversation.UpdRequeued, conversation.UpdDuplicate, conversation.UpdUnseen:
			fmt.Fprintf(w, "! %s\n", render.Inert(u.Err.Error()))
		case conversation.UpdActivity:
			if u.Activity.Kind == events.ActText {
				if shown.Len() > 0 {
					shown.WriteString("\n") // blocks, joined as the reply joins them
				}
				shown.WriteString(u.Activity.Text)
			}
			tr.Activity(events.RoleOrchestrator, u.Activity)
		case conversation.UpdDone:
			if r := strings.TrimSpace(u.Reply); r != "" && !strings.Contains(shown.String(), r) {
				tr.Activity(events.RoleOrchestrator, events.Activity{Kind: events.ActText, Text: r})
			}
			tr.Activity(events.RoleOrchestrator, events.Activity{Kind: events.ActDone})
		}
	}
}
