package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// TestPageComposerChatsWithSession: the room's composer in the page talks
// to a running Claude Code session as the terminal room does. /agent
// orchestrator picks the session (the lead); a plain message is previewed
// with its lane and sends nothing until Send; Send queues it in the
// session's inbox; the real `relay-baton hook stop` claims it at the
// session's turn boundary; the session's reply comes into the page's
// console and timeline (its Markdown rendered there).
func TestPageComposerChatsWithSession(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // keep ~/.claude out of it (serve inherits it)
	dir := gitRepo(t)
	s, transcript := chatSession(t, dir)
	ctx, _, _ := pageIn(t, dir, nil)
	const text = "how is the **refactor** going?"
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("/agent orchestrator"),
		waitText(`#console`, "active agent: orchestrator → Claude Code session "+sid),
		waitText(`#room-status`, "ready · active agent orchestrator"),
		typeLine(text),
		waitText(`#preview-title`, "send this? /chat → orchestrator"),
		waitText(`#preview-lane`, "lane: "),
		waitText(`#preview-lane`, sid),
		waitText(`#preview-lane`, "(inbox .claude/session-chat/"+sid+"/inbox/)"),
		waitText(`#preview-text`, text),
		waitText(`#preview-run`, "Send"),
	); err != nil {
		t.Fatalf("the chat preview: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if q, err := s.Queue(); err != nil || q.Depth != 0 {
		t.Fatalf("the inbox before Send: %+v %v", q, err)
	}
	shoot(ctx, t, "room-page-chat-preview.png")
	if err := within(ctx, 10*time.Second,
		press(`#preview-run`),
		waitText(`#console`, "queued (0 ahead): message "),
	); err != nil {
		t.Fatalf("Send: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	inbox, err := os.ReadDir(filepath.Join(dir, ".claude", "session-chat", sid, "inbox"))
	if err != nil || len(inbox) != 1 {
		t.Fatalf("the session's inbox after Send: %v %v", inbox, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".claude", "session-chat", sid, "inbox", inbox[0].Name()))
	if !strings.Contains(string(b), `"text":"how is the **refactor** going?"`) {
		t.Fatalf("the inbox holds %s", b)
	}
	stopHookTurn(t, dir, transcript, text, "Halfway: the **parser** split is done.\n\n- tests green\n- docs next")
	if err := within(ctx, 30*time.Second,
		waitText(`#console`, "delivered via hook"),
		// The console renders the reply's Markdown too.
		waitText(`#console`, "Halfway: the parser split is done."),
		waitJS(`[...document.querySelectorAll("#console .md strong")].some(e => e.textContent === "parser")`),
		waitText(`#room-status`, "ready"),
		// The log keeps a reply's summary on one line: its inline Markdown
		// is rendered in the timeline.
		waitJS(`[...document.querySelectorAll("#turns .ev.r-orchestrator .md strong")].some(e => e.textContent === "parser")`),
	); err != nil {
		t.Fatalf("the reply: %v\nconsole: %s\ntimeline: %s", err, pageText(ctx, t, "#console"), pageText(ctx, t, "#turns"))
	}
	shoot(ctx, t, "room-page-chat-reply.png")
	var sent, reply bool
	for _, e := range logEvents(t, dir) {
		if m, err := events.MetaOf[events.ChatSentMeta](&e); err == nil && e.Kind == events.KindChatSent && m.Session == sid && e.Text == text {
			sent = true
		}
		if m, err := events.MetaOf[events.ChatReplyMeta](&e); err == nil && e.Kind == events.KindChatReply && m.Session == sid && strings.Contains(e.Text, "split is done") {
			reply = true
		}
	}
	if !sent || !reply {
		t.Fatalf("the log: chat_sent %v, chat_reply %v", sent, reply)
	}
}
