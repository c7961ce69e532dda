// Package screens is what lets two screens of one conversation show each
// other's turns: every screen (a terminal room, the page of relay-baton
// serve, a one-shot command) appends to the same conversation.jsonl with
// the session id of its engine in every event, and names itself in
// .ai-session/screens/<session id>.json; Follow hands a screen the events
// another process appends, once each and in order, and Other says where
// one came from ("page: ...").
package screens

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/safeio"
)

// Dir is the folder, inside .ai-session, of the screens' records.
const Dir = "screens"

// The kinds of screen a record names.
const (
	Room = "room" // a terminal room (relay-baton chat)
	Page = "page" // the page of relay-baton serve
)

// record is .ai-session/screens/<session id>.json.
type record struct {
	Kind string `json:"kind"` // Room or Page
	Name string `json:"name"` // "relay-baton chat", "relay-baton serve's page"
	PID  int    `json:"pid"`
}

// Other is an event another process appended to the conversation log.
type Other struct {
	Event events.Event
	// Screen is the kind of screen that wrote it (Room, Page), "" when
	// it left no record.
	Screen string
}

// From is where the event came from, for its label: "page", "another
// room", or "another relay-baton process".
func (o Other) From() string {
	switch o.Screen {
	case Page:
		return "page"
	case Room:
		return "another room"
	}
	return "another relay-baton process"
}

// Text is the event as a terminal shows it: "page · 09:12:03 who kind:
// text", the clock local (replay.FormatLive: every string made inert),
// each continuation line labelled "  page │ who │ ...".
func (o Other) Text(color bool) string {
	return replay.FormatLive(o.From(), o.Event, color)
}

// path is the record of session's screen in the session folder sd (""
// outside a repository).
func path(sd, session string) string {
	if sd == "" {
		return ""
	}
	return filepath.Join(sd, Dir, session+".json")
}

// Announce records the screen of session (kind Room or Page, name as the
// run lock names it) in the session folder sd, for the other screens'
// labels, and returns what removes the record (the screen is closing). A
// failure to write it costs only the label.
func Announce(sd, session, kind, name string) (forget func()) {
	p := path(sd, session)
	if p == "" || !sessionid.IsUUID(session) {
		return func() {}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return func() {}
	}
	if err := safeio.NoLinkBelow(sd, filepath.Dir(p)); err != nil {
		return func() {}
	}
	b, _ := json.Marshal(record{Kind: kind, Name: name, PID: os.Getpid()})
	if err := safeio.WriteFile(p, b); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(p) }
}

// KindOf reads the kind of screen session's record in sd names (""
// when there is none or it cannot be read).
func KindOf(sd, session string) string {
	if !sessionid.IsUUID(session) { // log content: nothing else becomes a path
		return ""
	}
	p := path(sd, session)
	if p == "" {
		return ""
	}
	b, err := safeio.ReadOwned(p, 4096)
	if err != nil {
		return ""
	}
	var r record
	if json.Unmarshal(b, &r) != nil {
		return ""
	}
	switch r.Kind {
	case Room, Page:
		return r.Kind
	}
	return ""
}

// Follow hands fn the events of the log at path after byte from, whole
// lines only, whose sessionId is not own, each once (by id: a log
// replaced by a copy of itself is not shown again), in order, until ctx
// ends (then it returns nil). After a truncation or a replacement it
// reads the new file from its top (events.Follow).
func Follow(ctx context.Context, path string, from int64, own string, fn func(events.Event)) error {
	seen := newIDSet(8192)
	_, err := events.Follow(ctx, path, from, func(ev events.Event) error {
		if ev.SessionID == own || !seen.add(ev.ID) {
			return nil
		}
		fn(ev)
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// CompleteEnd is the offset just past the log's last whole line: a line
// another process is writing as a screen starts is read once it is whole.
func CompleteEnd(path string) int64 {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0
	}
	end := fi.Size()
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return end
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1
		}
		if end-pos > events.MaxReadLineBytes { // a line too long to be an event
			return end
		}
	}
	return 0
}

// idSet remembers the last n ids it was given.
type idSet struct {
	m    map[string]struct{}
	ring []string
	next int
}

func newIDSet(n int) *idSet { return &idSet{m: map[string]struct{}{}, ring: make([]string, n)} }

// add reports whether id is new, remembering it.
func (s *idSet) add(id string) bool {
	if id == "" {
		return true
	}
	if _, ok := s.m[id]; ok {
		return false
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.m[id] = struct{}{}
	return true
}
