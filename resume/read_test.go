package resume

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

func TestTranscriptReplyOffset(t *testing.T) {
	const path = "../transcript/testdata/claude-2.1.328-chat.jsonl"
	ctx := context.Background()
	for _, c := range []struct {
		offset int64
		id     string
		reply  string
		ok     bool
	}{
		{0, "fe869b44", "ack 2", true},
		{3983, "fe869b44", "ack 2", true},    // sent after turn 1 ended
		{11214, "fe869b44", "", false},       // past its delivery: not this transcript's
		{0, "ebb22c4e", "ack 3", true},       // delivered inside a hook's text
		{1 << 40, "fe869b44", "ack 2", true}, // a replaced (shorter) transcript is read from its start
		{0, "00000000", "", false},
	} {
		got, ok := transcriptReply(ctx, path, c.offset, c.id)
		if got != c.reply || ok != c.ok {
			t.Errorf("offset %d id %s: %q %v, want %q %v", c.offset, c.id, got, ok, c.reply, c.ok)
		}
	}
}

// BenchmarkRead measures rebuilding the state from a 100k-event log.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "conversation.jsonl")
	lg, err := events.OpenLog(path)
	if err != nil {
		b.Fatal(err)
	}
	fixture, _ := os.ReadFile(filepath.Join("..", "room", "testdata", "resume", "cancelled-loop.jsonl"))
	var buf []byte
	for len(buf) < 40<<20 {
		buf = append(buf, fixture...)
	}
	lg.Close()
	os.WriteFile(path, buf, 0o600)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		rs, err := Read(path, DefaultRecap)
		if err != nil || rs.Loop == nil {
			b.Fatal(err)
		}
	}
}

// TestResumeFollowsTheLead: a room that talked to the orchestrator as "the
// lead" resumes following whichever session is the lead then, even after
// sending it messages; a /target choice is kept as a choice.
func TestResumeFollowsTheLead(t *testing.T) {
	const a, b = "3f2a9c4e-8b1d-4e6f-9a0b-1c2d3e4f5a6b", "4f2a9c4e-8b1d-4e6f-9a0b-1c2d3e4f5a6b"
	write := func(t *testing.T, evs ...events.Event) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "conversation.jsonl")
		lg, err := events.OpenLog(p)
		if err != nil {
			t.Fatal(err)
		}
		defer lg.Close()
		for _, e := range evs {
			if err := lg.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	lead := events.NewWithMeta("s", events.RoleRelayBaton, "active agent: orchestrator, session "+a, events.StatusMeta{
		Agent: orchestrator, Switched: true, Session: a, FollowsLead: true})
	sent := events.NewWithMeta("s", events.RoleUser, "hi", events.ChatSentMeta{Session: a, MessageID: "0123abcd"})
	rs, err := Read(write(t, lead, sent), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.FollowsLead || rs.Target != "" || rs.Active != orchestrator {
		t.Fatalf("after a switch to the lead and a message: follows %v, target %q, active %q", rs.FollowsLead, rs.Target, rs.Active)
	}
	chosen := events.NewWithMeta("s", events.RoleUser, "/target "+b, events.CommandMeta{Command: "target"})
	rs, err = Read(write(t, lead, sent, chosen), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rs.FollowsLead || rs.Target != b {
		t.Fatalf("after /target: follows %v, target %q", rs.FollowsLead, rs.Target)
	}
}
