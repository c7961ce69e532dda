package room

import (
	"encoding/json"
	"testing"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/workspace"
)

// What the room writes, resume reads back through the same types: the
// transcript offset of a chat message (written as transcriptOffset, read
// as "offset" before the typed meta, so it was lost) and an agent switch
// told by StatusMeta.Switched, whatever the text says.
func TestResumeReadsWhatTheRoomWrites(t *testing.T) {
	h := newHarness(t)
	const sid = "0b6f6a3e-1111-4222-8333-444455556666"
	h.e.emit(events.RoleRelayBaton, "now talking to codex", nil, events.StatusMeta{Agent: "codex", Switched: true})
	h.e.emit(events.RoleUser, "hello", nil, events.ChatSentMeta{Session: sid, MessageID: "abcd1234", TranscriptOffset: 4096})
	rs, err := resume.Read(workspace.LogPath(h.dir), 10)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Active != "codex" || rs.ActiveFrom != "status" {
		t.Errorf("active %q from %q", rs.Active, rs.ActiveFrom)
	}
	if len(rs.Chats) != 1 || rs.Chats[0].Offset != 4096 || rs.Target != sid || rs.BadMeta != 0 {
		t.Errorf("chats %+v target %q bad %d", rs.Chats, rs.Target, rs.BadMeta)
	}
}

// metaMap decodes an event's meta as a generic JSON object (numbers as
// float64), for tests that check what the log holds key by key.
func metaMap(m events.MetaJSON) map[string]any {
	var out map[string]any
	_ = json.Unmarshal(m, &out)
	return out
}
