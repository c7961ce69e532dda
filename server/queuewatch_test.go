package server

import (
	"context"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// The page's queue feed: the inbox's depth at once and as it changes, then
// each message a lane delivers, once, with its lane.
func TestWatchQueueDepthAndDeliveries(t *testing.T) {
	_, s, _ := chatWorkspace(t)
	ctx, cancel := context.WithCancel(context.Background())
	ups := make(chan queueUpdate, 64)
	done := make(chan error, 1)
	go func() { done <- watchQueueOf(ctx, s, func() {}, func(u queueUpdate) { ups <- u }) }()
	next := func(what string) queueUpdate {
		t.Helper()
		select {
		case u := <-ups:
			return u
		case <-time.After(time.Minute): // a hang guard
			t.Fatalf("no update: %s", what)
		}
		return queueUpdate{}
	}
	if u := next("the depth at once"); u.depth != 0 || u.delivered != nil {
		t.Fatalf("first update %+v, want depth 0", u)
	}
	m, err := s.Enqueue("room", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if u := next("depth 1"); u.depth != 1 || u.delivered != nil {
		t.Fatalf("after a send: %+v, want depth 1", u)
	}
	if res, err := s.Claim(conversation.LaneHook); err != nil || !res.OK {
		t.Fatalf("claim: %+v %v", res, err)
	}
	var delivered, empty bool
	for !delivered || !empty {
		u := next("the delivery and the empty inbox")
		switch {
		case u.delivered != nil:
			if delivered || u.delivered.ID != m.ID || u.delivered.Lane != conversation.LaneHook || u.delivered.DeliveredAt == nil {
				t.Fatalf("delivered %+v (again: %v), want message %s once, by the hook lane", u.delivered, delivered, m.ID)
			}
			delivered = true
		case u.depth == 0:
			empty = true
		default:
			t.Fatalf("unexpected update %+v", u)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
