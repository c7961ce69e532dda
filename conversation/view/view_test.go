package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
)

// An ended session cannot take a message (send refuses it): its row says
// CHAT no, though its inbox is still there.
func TestTargetsEndedRowCannotChat(t *testing.T) {
	var b strings.Builder
	now := time.Now()
	ts := []conversation.Target{
		{SessionID: "11111111-0000-4000-8000-000000000001", ChatCapable: true, State: procfacts.Live},
		{SessionID: "22222222-0000-4000-8000-000000000002", ChatCapable: true, State: procfacts.Ended},
	}
	if err := Targets(&b, ts, TableOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.HasSuffix(f[0], "-000000000002") && !strings.HasSuffix(f[0], "-000000000001") {
			continue
		}
		want := "yes"
		if strings.HasSuffix(f[0], "-000000000002") {
			want = "no"
		}
		rows++
		if f[1] != want {
			t.Errorf("CHAT %q, want %q in %q", f[1], want, l)
		}
	}
	if rows != 2 {
		t.Fatalf("%d rows in:\n%s", rows, b.String())
	}
}

// send --follow shows the stored reply when the transcript's text did not
// (it lags or was cut), and never twice.
func TestFollowShowsTheStoredReply(t *testing.T) {
	var b bytes.Buffer
	v := Follow(&b, false)
	v(conversation.Update{Kind: conversation.UpdActivity, Activity: events.Activity{Kind: events.ActText, Text: "Working on it."}})
	v(conversation.Update{Kind: conversation.UpdDone, Reply: "Two of five steps are done."})
	if !strings.Contains(b.String(), "Two of five steps are done.") {
		t.Fatalf("the stored reply is not shown:\n%s", b.String())
	}
	b.Reset()
	v = Follow(&b, false)
	v(conversation.Update{Kind: conversation.UpdActivity, Activity: events.Activity{Kind: events.ActText, Text: "All green."}})
	v(conversation.Update{Kind: conversation.UpdDone, Reply: "All green."})
	if n := strings.Count(b.String(), "All green."); n != 1 {
		t.Fatalf("the reply shows %d times:\n%s", n, b.String())
	}
	// A reply of two blocks, both shown as they came: not shown again.
	b.Reset()
	v = Follow(&b, false)
	v(conversation.Update{Kind: conversation.UpdActivity, Activity: events.Activity{Kind: events.ActText, Text: "First part."}})
	v(conversation.Update{Kind: conversation.UpdActivity, Activity: events.Activity{Kind: events.ActText, Text: "Second part."}})
	v(conversation.Update{Kind: conversation.UpdDone, Reply: "First part.\nSecond part."})
	if n := strings.Count(b.String(), "Second part."); n != 1 {
		t.Fatalf("the reply shows %d times:\n%s", n, b.String())
	}
}
