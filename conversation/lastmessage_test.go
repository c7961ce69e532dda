package conversation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// Claude Code writes each block of a turn's last message as a line of its
// own, every one with the message's end_turn (measured with 2.1.332: both
// lines of a two-block reply carried it). The follower shows every block
// and ends the turn at the last one, not at the first.
func TestFollowShowsEveryBlockOfTheLastMessage(t *testing.T) {
	s, r, tr := handedOver(t, "two blocks please")
	f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "%s\n%s\n%s\n",
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n[relay-baton chat message `+r.Message.ID+` from room, typed]"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"first block"}],"stop_reason":"end_turn"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"second block"}],"stop_reason":"end_turn"}}`)
	f.Close()
	storeReplies(s, "second block")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var texts []string
	doneAt := -1
	got, err := Follow(ctx, r, WatchOptions{Poll: 50 * time.Millisecond}, false, func(u Update) {
		switch {
		case u.Kind == UpdActivity && u.Activity.Kind == events.ActText:
			texts = append(texts, u.Activity.Text)
		case u.Kind == UpdDone:
			doneAt = len(texts)
		}
	})
	if err != nil || got.Outcome != Replied {
		t.Fatalf("follow: %+v %v", got, err)
	}
	if len(texts) != 2 || texts[0] != "first block" || texts[1] != "second block" || doneAt != 2 {
		t.Fatalf("shown %q, end of turn after %d of them", texts, doneAt)
	}
}

// A turn's reply is its last message whole: the Stop hook stores only the
// last block, the blocks before it (since the last tool call) are kept.
func TestLastMessageText(t *testing.T) {
	for _, c := range []struct {
		blocks       []string
		stored, want string
	}{
		{[]string{"first", "last"}, "last", "first\nlast"},
		{[]string{"first", "last"}, "", ""},
		{nil, "stored", "stored"},
		{[]string{"transcript text, cut short"}, "The full reply.", "The full reply."},
	} {
		if got := lastMessageText(c.blocks, c.stored); got != c.want {
			t.Errorf("lastMessageText(%q, %q) = %q, want %q", c.blocks, c.stored, got, c.want)
		}
	}
}

// The lines of one message written apart: the turn does not end at the
// first while the second may still come.
func TestFollowWaitsForTheMessagesNextLine(t *testing.T) {
	s, r, tr := handedOver(t, "two writes please")
	write := func(lines ...string) {
		f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
		for _, l := range lines {
			fmt.Fprintf(f, "%s\n", l)
		}
		f.Close()
	}
	write(`{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n[relay-baton chat message `+r.Message.ID+` from room, typed]"}}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"first block"}],"stop_reason":"end_turn"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var texts []string
	got, err := Follow(ctx, r, WatchOptions{Poll: 20 * time.Millisecond, BlockSettle: time.Hour}, false, func(u Update) {
		if u.Kind == UpdActivity && u.Activity.Kind == events.ActText {
			texts = append(texts, u.Activity.Text)
			if u.Activity.Text == "first block" {
				// The tail has read the first line: the second comes
				// in a write of its own, then the Stop hook's reply.
				write(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"second block"}],"stop_reason":"end_turn"}}`)
				storeReplies(s, "second block")
			}
		}
	})
	if err != nil || got.Outcome != Replied || got.Reply != "first block\nsecond block" {
		t.Fatalf("follow: %+v %v", got, err)
	}
	if len(texts) != 2 {
		t.Fatalf("shown %q", texts)
	}
}

// handedOver is a session with a transcript whose Stop hook handed over
// message text (claimed, delivered, its answer awaited): what a Follow of
// it starts from.
func handedOver(t *testing.T, text string) (*Session, Receipt, string) {
	t.Helper()
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	s := newSession(t)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(tr, nil, 0o600)
	s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace})
	r, err := Send(s.Workspace, s.ID, "room", text)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := s.ClaimWith(LaneHook, ClaimOptions{Handover: true, Transcript: tr})
	res.Delivered()
	markAnswering(s, r.Message.ID)
	return s, r, tr
}
