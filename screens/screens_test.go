package screens

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// A screen that starts while another process is writing a line reads that
// line once it is whole, and nothing before it.
func TestFollowOthersStartsAfterTheLastWholeLine(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/conversation.jsonl"
	whole := string(events.AppendJSON(nil, events.NewWithMeta("s-before", events.RoleUser, "BEFORE", events.MessageMeta{}))) + "\n"
	torn := string(events.AppendJSON(nil, events.NewWithMeta("s-other", events.RoleUser, "WRITTEN AS THE ROOM STARTS", events.MessageMeta{})))
	if err := os.WriteFile(path, []byte(whole+torn[:15]), 0o600); err != nil {
		t.Fatal(err)
	}
	from := CompleteEnd(path)
	if from != int64(len(whole)) {
		t.Fatalf("CompleteEnd %d, want %d", from, len(whole))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan events.Event, 10)
	go Follow(ctx, path, from, "own", func(e events.Event) { ch <- e })
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn[15:] + "\n")
	f.Close()
	select {
	case e := <-ch:
		if e.Text != "WRITTEN AS THE ROOM STARTS" {
			t.Fatalf("got %q", e.Text)
		}
	case <-time.After(time.Minute):
		t.Fatal("waited a minute for the line written as the room started")
	}
}

// A session id from the log becomes a path only when it is UUID-shaped:
// "../x" or a name with a slash is never read or written.
func TestRecordsOnlyForUUIDs(t *testing.T) {
	sd := t.TempDir()
	id := events.NewUUID()
	forget := Announce(sd, id, Page, "relay-baton serve's page")
	if KindOf(sd, id) != Page {
		t.Fatalf("the page's record not read back")
	}
	if b, err := os.ReadFile(filepath.Join(sd, Dir, id+".json")); err != nil || len(b) == 0 {
		t.Fatalf("record %q %v", b, err)
	}
	forget()
	if KindOf(sd, id) != "" {
		t.Fatal("the record outlived its screen")
	}
	os.WriteFile(filepath.Join(sd, "x.json"), []byte(`{"kind":"page"}`), 0o600)
	for _, bad := range []string{"../x", "x", "../" + id[3:], ""} {
		if KindOf(filepath.Join(sd, Dir), bad) != "" {
			t.Fatalf("%q read as a screen", bad)
		}
		Announce(sd, bad, Room, "x")()
	}
	if names, _ := os.ReadDir(filepath.Join(sd, Dir)); len(names) != 0 {
		t.Fatalf("records written for bad ids: %v", names)
	}
}

// The set of ids seen forgets the oldest beyond its size.
func TestIDSet(t *testing.T) {
	s := newIDSet(2)
	if !s.add("a") || !s.add("b") || s.add("a") || !s.add("c") || !s.add("a") || s.add("c") {
		t.Fatal("idSet")
	}
}
