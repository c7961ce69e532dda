package room

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// cutClaim leaves on disk what a hook SIGKILLed right after its rename
// leaves: an unlocked claim marker and a delivered record with a lane and
// no deliveredAt.
func cutClaim(t *testing.T, s *conversation.Session, lane conversation.Lane) string {
	t.Helper()
	ents, _ := os.ReadDir(s.InboxDir())
	if len(ents) != 1 {
		t.Fatalf("inbox %v", ents)
	}
	name := ents[0].Name()
	id := strings.TrimSuffix(strings.SplitN(name, "-", 2)[1], ".json")
	b, err := os.ReadFile(filepath.Join(s.InboxDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	m["lane"], m["claimedAt"] = string(lane), now
	rec, _ := json.Marshal(m)
	mk, _ := json.Marshal(map[string]any{"id": id, "lane": lane, "pid": 1 << 22, "inbox": name, "claimedAt": now})
	os.MkdirAll(s.ClaimsDir(), 0o700)
	os.WriteFile(filepath.Join(s.ClaimsDir(), id+".json"), mk, 0o600)
	os.WriteFile(s.DeliveredPath(id), rec, 0o600)
	os.Remove(filepath.Join(s.InboxDir(), name))
	return id
}

// TestCutClaimResendAndResume: a claim cut short (its claimer killed after
// the rename) is unconfirmed for the room: /resend puts the same message
// back in the inbox (no copy), and a resume lists it as unconfirmed.
func TestCutClaimResendAndResume(t *testing.T) {
	h := newHarness(t, "y")
	s, _ := simSession(t, h, simSID)
	h.e.Process(context.Background(), "/agent orchestrator")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	h.e.Process(ctx, "cut short")
	cancel()
	id := cutClaim(t, s, conversation.LaneHook)
	if st, _ := s.State(id); !st.Incomplete || !st.Stalled {
		t.Fatalf("state %+v, want incomplete", st)
	}
	if _, err := h.e.Process(context.Background(), "/resend"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "message "+id+" is back in the inbox of session "+simSID+" (same id)") {
		t.Fatalf("output:\n%s", h.out)
	}
	if st, _ := s.State(id); !st.Queued || len(h.e.chat.Sent) != 1 {
		t.Fatalf("after /resend: %+v, sent %d (want the same message queued, no copy)", st, len(h.e.chat.Sent))
	}
	// Cut again; a resumed room says it is unconfirmed and /resend works.
	cutClaim(t, s, conversation.LaneHook)
	h2 := &harness{out: h.out, term: &scriptTerm{}, fr: &fakeRunner{}, dir: h.dir}
	h.out.Reset()
	e2, err := New(Config{Dir: h.dir, Runner: h2.fr, Out: h2.out, Term: h2.term, Getenv: func(string) string { return "" }, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, err := e2.Resume(context.Background(), 6); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "claimed by the hook lane but not confirmed") {
		t.Fatalf("resume output:\n%s", h.out)
	}
	if _, err := e2.Process(context.Background(), "/resend"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.State(id); !st.Queued {
		t.Fatalf("after /resend from the resumed room: %+v", st)
	}
}
