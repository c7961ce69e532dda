//go:build unix

package room

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// The room with a session whose messaging socket takes the message and
// drops it: the room says it was posted, not delivered; after the claim
// grace that it is back in the inbox for the hooks; then "delivered via
// hook" and the answer, logged once (chat_delivered with the hook's
// lane); /targets says the socket drops messages.
func TestChatDroppedSocketPostReachesTheHook(t *testing.T) {
	h := newHarness(t, "y")
	s, tr := simSession(t, h, simSID)
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "200ms")
	dir, _ := os.MkdirTemp("", "sock") // short: a socket path has a length limit
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // takes every post, shows nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64<<10)
			for {
				if _, err := c.Read(buf); err != nil {
					break
				}
			}
			c.Close()
		}
	}()
	if err := s.RecordSocket(conversation.SocketInfo{Path: filepath.Join(dir, "s.sock"), Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // the session's turn ends after the grace: its Stop hook delivers
		defer close(done)
		deadline := time.Now().Add(time.Minute) // a hang guard
		posted := ""
		for time.Now().Before(deadline) {
			ents, _ := os.ReadDir(s.DeliveredDir())
			for _, e := range ents {
				id := strings.TrimSuffix(e.Name(), ".json")
				if st, _ := s.State(id); st.Delivered != nil && st.Delivered.Lane == conversation.LaneSocket {
					posted = id
				}
			}
			if posted != "" {
				if st, _ := s.State(posted); st.Queued {
					res, err := s.Claim(conversation.LaneHook)
					if err != nil || !res.OK {
						t.Errorf("claim: %v %+v", err, res)
						return
					}
					appendTranscript(t, tr,
						`{"type":"user","isMeta":true,"message":{"role":"user","content":`+jsonString("Stop hook feedback:\n"+s.Frame(res.Message))+`}}`,
						`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"HOOK-ANSWER"}],"stop_reason":null}}`,
						`{"type":"system","subtype":"turn_duration","durationMs":1200}`,
					)
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Error("the dropped post never went back to the inbox")
	}()
	if _, err := h.e.Process(ctx, "are you there?"); err != nil {
		t.Fatal(err)
	}
	<-done
	out := h.out.String()
	for _, want := range []string{
		"posted to the session's messaging socket at ",
		"but the session never showed it within 200ms: it is back in the inbox, first in line, for the Stop hook and the rewake waiter",
		"delivered via hook at ",
		"[orchestrator] HOOK-ANSWER",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "delivered via socket") {
		t.Errorf("a dropped post shown as delivered:\n%s", out)
	}
	list := h.events(t)
	if got := kinds(list); got != "command,status,prompt_preview,command,chat_sent,chat_delivered,chat_reply" {
		t.Fatalf("events %s", got)
	}
	if lane := metaMap(list[5].Meta)["lane"]; lane != "hook" {
		t.Errorf("chat_delivered lane %v, want hook", lane)
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/targets"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "socket drops messages: delivered by hooks") {
		t.Errorf("/targets:\n%s", h.out)
	}
}

// A message posted to a busy session's socket shows in its transcript
// later (when the session takes it). Ctrl-C after that says the time the
// transcript showed it, the same time "delivered via socket at" said,
// not the time of the post.
func TestChatStoppedAfterASocketDeliveryNamesTheTranscriptsTime(t *testing.T) {
	h := newHarness(t, "y")
	s, tr := simSession(t, h, simSID)
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "sock") // short: a socket path has a length limit
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // takes every post; the test writes the transcript
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64<<10)
			for {
				if _, err := c.Read(buf); err != nil {
					break
				}
			}
			c.Close()
		}
	}()
	if err := s.RecordSocket(conversation.SocketInfo{Path: filepath.Join(dir, "s.sock"), Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()                          // Ctrl-C once the room has seen the delivery
		deadline := time.Now().Add(time.Minute) // a hang guard
		var posted *conversation.Message
		for posted == nil && time.Now().Before(deadline) {
			ents, _ := os.ReadDir(s.DeliveredDir())
			for _, e := range ents {
				if st, _ := s.State(strings.TrimSuffix(e.Name(), ".json")); st.Delivered != nil && st.Delivered.Lane == conversation.LaneSocket {
					posted = st.Delivered
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		if posted == nil {
			t.Error("never posted")
			return
		}
		// The busy session takes it in a later second than the post.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
		b, _ := json.Marshal(map[string]any{"type": "user", "turnOrigin": "peer", "message": map[string]any{"role": "user", "content": "Another Claude session sent a message:\n" + s.Frame(*posted) + "\n\nThis came from another Claude session."}})
		appendTranscript(t, tr, string(b))
		for time.Now().Before(deadline) {
			if log, _ := os.ReadFile(workspace.LogPath(h.dir)); strings.Contains(string(log), `"kind":"chat_delivered"`) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Error("the room never saw the delivery")
	}()
	if _, err := h.e.Process(ctx, "are you there?"); err != nil {
		t.Fatal(err)
	}
	<-done
	out := h.out.String()
	seen := regexp.MustCompile(`delivered via socket at (\d\d:\d\d:\d\d)`).FindStringSubmatch(out)
	stopped := regexp.MustCompile(`stopped waiting: message \S+ was delivered via socket at (\d\d:\d\d:\d\d)`).FindStringSubmatch(out)
	if seen == nil || stopped == nil || seen[1] != stopped[1] {
		t.Fatalf("the delivery time differs between the lines:\n%s", out)
	}
}
