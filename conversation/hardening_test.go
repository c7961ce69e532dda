package conversation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/transcript"
)

func textLine(id, text string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}]}}`+"\n", id, text)
}

// TestTailRewrittenInPlace: a transcript rewritten in place (same file,
// truncated and written again) that ends up larger than the offset read so
// far is detected as replaced and read from its start: no line lost, no
// "not JSON" for a line read from its middle.
func TestTailRewrittenInPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte(textLine("m1", "one")+textLine("m2", "two")), 0o600)
	var mu sync.Mutex
	var texts, skips []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- transcript.Tail(ctx, transcript.TailOptions{Path: p, Follow: true, Poll: 20 * time.Millisecond,
			OnSkip: func(_ int64, why string) { mu.Lock(); skips = append(skips, why); mu.Unlock() },
			OnActivity: func(_ int64, acts []events.Activity) bool {
				mu.Lock()
				defer mu.Unlock()
				for _, a := range acts {
					if a.Kind == events.ActText {
						texts = append(texts, a.Text)
					}
				}
				return true
			}})
	}()
	waitFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(texts)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("texts %q, skips %q; want %d texts", texts, skips, n)
			}
		}
	}
	waitFor(2)
	fi1, _ := os.Stat(p)
	// In place: the same inode written over from its start with a longer
	// content, in one write (an editor saving without a temporary file).
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(textLine("n1", "three, a longer first line than before")+textLine("n2", "four")+textLine("n3", "five")), 0)
	f.Close()
	if fi2, _ := os.Stat(p); !os.SameFile(fi1, fi2) || fi2.Size() <= fi1.Size() {
		t.Fatal("the rewrite did not keep the file or grow it")
	}
	waitFor(5)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []string{"one", "two", "three, a longer first line than before", "four", "five"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("texts %q, want %q", texts, want)
	}
	if len(skips) != 1 || !strings.Contains(skips[0], "rewritten in place") {
		t.Errorf("skip notices %q, want one saying the transcript was rewritten in place", skips)
	}
}

// TestTailBOM: a UTF-8 byte-order mark before the first line does not cost
// that line.
func TestTailBOM(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte("\xEF\xBB\xBF"+textLine("m1", "first")+textLine("m2", "second")), 0o600)
	var texts, skips []string
	err := transcript.Tail(context.Background(), transcript.TailOptions{Path: p,
		OnSkip: func(_ int64, why string) { skips = append(skips, why) },
		OnActivity: func(_ int64, acts []events.Activity) bool {
			for _, a := range acts {
				if a.Kind == events.ActText {
					texts = append(texts, a.Text)
				}
			}
			return true
		}})
	if err != nil || strings.Join(texts, "|") != "first|second" || len(skips) != 0 {
		t.Fatalf("texts %q skips %q err %v; want both lines", texts, skips, err)
	}
}

// die simulates a claimer killed after its rename: the marker's lock goes
// as the kernel would drop it.
func die(res *ClaimResult) {
	res.held.f.Close()
	res.held = nil
}

// TestDeadClaimVisibleAndRedelivered: a claim whose claimer died before
// the hand-over shows as incomplete (never "delivered" with an empty lane),
// Watch says so, the next lane delivers it again (same id, once), and the
// recovery is in errors.log. Requeue (/resend) does the same at once.
func TestDeadClaimVisibleAndRedelivered(t *testing.T) {
	s := newSession(t)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(tr, nil, 0o600)
	s.Register(Registration{TranscriptPath: tr, Cwd: s.Workspace})
	m, _ := s.Enqueue("room", "claimed by a hook that died")
	res, err := s.ClaimWith(LaneHook, ClaimOptions{Handover: true})
	if err != nil || !res.OK || res.Message.ID != m.ID {
		t.Fatalf("claim: %+v %v", res, err)
	}
	st, _ := s.State(m.ID)
	if !st.Incomplete || st.Stalled || st.Delivered.Lane != LaneHook || st.Delivered.ClaimedAt == nil || st.Delivered.DeliveredAt != nil {
		t.Fatalf("live claim: %+v %+v", st, st.Delivered)
	}
	die(&res)
	st, _ = s.State(m.ID)
	if !st.Incomplete || !st.Stalled {
		t.Fatalf("dead claim: %+v, want incomplete and stalled", st)
	}
	// Watch: no "delivered" for it; it says incomplete, then follows it
	// back through the inbox to a real delivery.
	var mu sync.Mutex
	var kinds []UpdateKind
	var lanes []Lane
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, Receipt{Session: s, Message: m, TranscriptPath: tr}, WatchOptions{Poll: 20 * time.Millisecond}, func(u Update) {
			mu.Lock()
			defer mu.Unlock()
			kinds = append(kinds, u.Kind)
			lanes = append(lanes, u.Lane)
			if u.Kind == UpdIncomplete && (u.Err == nil || !strings.Contains(u.Err.Error(), "goes back to the inbox for the next lane") || !strings.Contains(u.Err.Error(), "the hook lane")) {
				t.Errorf("incomplete update: %v", u.Err)
			}
		})
	}()
	// The next lane claims it once Watch has followed it back into the
	// inbox (a claim before that would leave Watch nothing queued to see).
	testkit.Eventually(t, "Watch following the dead claim back to the inbox", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(kinds, UpdQueued)
	})
	again, err := s.Claim(LaneRewake)
	if err != nil || !again.OK || again.Message.ID != m.ID {
		t.Fatalf("next lane: %+v %v", again, err)
	}
	frame := s.Frame(again.Message)
	f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, `{"type":"user","isMeta":true,"message":{"role":"user","content":%q}}`+"\n", "Stop hook feedback:\n"+frame)
	f.WriteString(`{"type":"assistant","message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"got it"}],"stop_reason":"end_turn"}}` + "\n")
	f.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := fmt.Sprint(kinds)
	for i, k := range kinds {
		if k == UpdDelivered && lanes[i] != LaneRewake {
			t.Errorf("delivered via %q, want the lane that delivered it", lanes[i])
		}
	}
	mu.Unlock()
	if !strings.HasPrefix(got, "[incomplete queued") || !strings.Contains(got, "delivered confirmed") || !strings.HasSuffix(got, "done]") {
		t.Errorf("updates %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	if !strings.Contains(string(b), "recovered "+m.ID+": claim of "+m.ID+" by hook") || !strings.Contains(string(b), "put back in the inbox for the next lane") {
		t.Errorf("errors.log:\n%s", b)
	}
	if ents, _ := os.ReadDir(s.ClaimsDir()); len(ents) != 0 {
		t.Errorf("claims left: %v", ents)
	}

	// Requeue (what /resend does) on a hand-over that never showed.
	m2, _ := s.Enqueue("room", "handed over, never seen")
	res2, _ := s.ClaimWith(LaneRewake, ClaimOptions{Handover: true})
	res2.Delivered()
	if st, _ := s.State(m2.ID); st.Incomplete || !st.Unconfirmed {
		t.Fatalf("handed over: %+v", st)
	}
	if re, conf, err := s.Requeue(m2.ID); !re || conf || err != nil {
		t.Fatalf("requeue: %v %v %v", re, conf, err)
	}
	if st, _ := s.State(m2.ID); !st.Queued {
		t.Fatalf("after requeue: %+v", st)
	}
	if re, _, _ := s.Requeue(m2.ID); re {
		t.Error("requeued twice")
	}
}
