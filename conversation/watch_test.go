package conversation

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
)

const lineText = `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"the answer"}],"stop_reason":"end_turn"}}`

// Watch: queued, delivered by a lane, confirmed in the transcript, the
// reply's activities, done.
func TestSendAndWatch(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	s, _ := OpenSession(ws, testSID)
	tr := filepath.Join(t.TempDir(), testSID+".jsonl")
	os.WriteFile(tr, []byte(lineText+"\n"), 0o600) // an earlier turn: must not count
	if err := s.Register(Registration{TranscriptPath: tr, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	s.Enqueue("x", "someone else first")
	r, err := Send(ws, testSID, "room", "how is it going?")
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != int64(len(lineText)+1) || r.TranscriptPath != tr {
		t.Fatalf("receipt = %+v", r)
	}
	var mu sync.Mutex
	var got []string
	var reply string
	errc := make(chan error, 1)
	go func() {
		errc <- Watch(context.Background(), r, WatchOptions{Poll: 50 * time.Millisecond}, func(u Update) {
			mu.Lock()
			defer mu.Unlock()
			e := string(u.Kind)
			switch u.Kind {
			case UpdQueued:
				e += "(" + string(rune('0'+u.Ahead)) + ")"
			case UpdDelivered:
				e += "(" + string(u.Lane) + ")"
			case UpdActivity:
				e += "(" + string(u.Activity.Kind) + ")"
			case UpdDone:
				reply = u.Reply
			}
			got = append(got, e)
		})
	}()
	seen := func(e string) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(got, e) }
	}
	testkit.Eventually(t, "queued(1)", seen("queued(1)"))
	// The session finishes its turn: the Stop hook delivers the first message.
	first, _ := s.Claim(LaneHook)
	appendLine(t, tr, `{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n`+strings.ReplaceAll(s.Frame(first.Message), "\n", `\n`)+`"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m5","role":"assistant","content":[{"type":"text","text":"answer to the other"}],"stop_reason":"end_turn"}}`)
	testkit.Eventually(t, "queued(0)", seen("queued(0)"))
	// Then ours, by the idle lane.
	mine, _ := s.Claim(LaneRewake)
	if mine.Message.ID != r.Message.ID {
		t.Fatalf("claimed %s, want %s", mine.Message.ID, r.Message.ID)
	}
	appendLine(t, tr, `{"type":"user","isMeta":true,"message":{"role":"user","content":"<system-reminder>Stop hook blocking error from command \"rb\": [relay-baton chat message `+r.Message.ID+`]</system-reminder>"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m6","role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/x"}}],"stop_reason":"tool_use"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m7","role":"assistant","content":[{"type":"text","text":"all good"}],"stop_reason":"end_turn"}}`)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Watch did not finish; got %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "queued(1),queued(0),delivered(rewake),confirmed,activity(thinking),activity(tool),activity(text),done"
	if strings.Join(got, ",") != want {
		t.Errorf("updates = %s\nwant      %s", strings.Join(got, ","), want)
	}
	if reply != "all good" {
		t.Errorf("reply = %q", reply)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), `"role":"agent","text":"all good"`) {
		t.Errorf("log.jsonl = %s", log)
	}
}

func TestWatchCancelledAndUnreadable(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	s, _ := OpenSession(ws, testSID)
	s.Ensure()
	r, _ := Send(ws, testSID, "", "cancel me")
	var kinds []UpdateKind
	cancelled := false
	if err := Watch(context.Background(), r, WatchOptions{Poll: 50 * time.Millisecond}, func(u Update) {
		kinds = append(kinds, u.Kind)
		if u.Kind == UpdQueued && !cancelled { // Watch has seen it queued: now it goes
			cancelled = true
			s.Cancel(r.Message.ID)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[1] != UpdCancelled {
		t.Errorf("updates = %v, want queued, cancelled", kinds)
	}
	r2, _ := Send(ws, testSID, "", "no transcript")
	s.Claim(LaneMonitor)
	kinds = nil
	if err := Watch(context.Background(), r2, WatchOptions{}, func(u Update) { kinds = append(kinds, u.Kind) }); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[0] != UpdDelivered || kinds[1] != UpdUnreadable {
		t.Errorf("updates = %v, want delivered, unreadable", kinds)
	}
}

func appendLine(t *testing.T, p, line string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line + "\n")
	f.Close()
}
