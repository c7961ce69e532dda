package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/safeio"
)

// Room is the Agent Room's side of the page, read-only: the repository's
// conversation log (the timeline), its .ai-session folder (the files events
// name in refs) and the context panel's facts, computed by the same code as
// the terminal's panel (main passes a room.View). Nothing here starts an
// agent: the page's composer drives the room through Desk (desk.go).
type Room interface {
	LogPath() string
	SessionDir() string
	Context(ctx context.Context) (any, error)
}

// Timeline paging limits.
const (
	DefaultTimelinePage = 200
	MaxTimelinePage     = 1000
	// MaxRefBytes caps a file shown from refs; the rest is cut with a note.
	MaxRefBytes = 1 << 20
)

// ContextEvery is how often an open room stream recomputes the context even
// when the log did not change (plan age, edits outside the room).
var ContextEvery = 5 * time.Second

// TimelineEvent is one event of the timeline with its line's offset.
type TimelineEvent struct {
	Offset int64        `json:"offset"`
	Event  events.Event `json:"event"`
}

// liveEvent is a timeline event on the room stream (no offset: Follow
// delivers events, not their lines' positions).
type liveEvent struct {
	Event events.Event `json:"event"`
}

// pageSafe passes an event's text through the one sanitizer before it
// leaves for the page (which also only ever sets it as textContent): the
// log holds what models and tools said, and that is untrusted.
func pageSafe(e events.Event) events.Event {
	e.Text = render.Inert(e.Text)
	return e
}

// TimelinePage is the answer to GET /api/timeline.
type TimelinePage struct {
	Events []TimelineEvent `json:"events"`
	// Before is the cursor for the page before this one; More is false
	// when the start of the log was reached.
	Before int64 `json:"before"`
	More   bool  `json:"more"`
	// End is the offset to stream from (GET /api/room/stream?from=End).
	End     int64 `json:"end"`
	Skipped int   `json:"skipped"`
	NoLog   bool  `json:"noLog,omitempty"`
}

// SetRoom adds the room's timeline and context to the page.
func (s *Server) SetRoom(r Room) { s.room = r }

// filterFrom parses the role and kind filters (comma-separated, repeatable)
// as replay takes them.
func filterFrom(r *http.Request) (func(*events.Event) bool, error) {
	set := func(name string, valid func(string) bool) (map[string]bool, error) {
		var m map[string]bool
		for _, v := range r.URL.Query()[name] {
			for _, x := range strings.Split(v, ",") {
				if x = strings.TrimSpace(x); x == "" {
					continue
				}
				if !valid(x) {
					return nil, fmt.Errorf("unknown %s %q", name, x)
				}
				if m == nil {
					m = map[string]bool{}
				}
				m[x] = true
			}
		}
		return m, nil
	}
	roles, err := set("role", func(x string) bool { return events.ValidRole(events.Role(x)) })
	if err != nil {
		return nil, err
	}
	kinds, err := set("kind", func(x string) bool { return events.ValidKind(events.Kind(x)) })
	if err != nil {
		return nil, err
	}
	if roles == nil && kinds == nil {
		return nil, nil
	}
	return func(e *events.Event) bool {
		return (roles == nil || roles[string(e.Role)]) && (kinds == nil || kinds[string(e.Kind)])
	}, nil
}

func (s *Server) needRoom(w http.ResponseWriter) bool {
	if s.room == nil {
		fail(w, http.StatusNotFound, "this server shows no Agent Room (serve it from inside a git repository)")
		return false
	}
	return true
}

// ownLog refuses a conversation log that is a symlink, or under a linked
// .ai-session: the page shows nothing read through a link a repository
// planted.
func (s *Server) ownLog() error {
	return safeio.NoLinkBelow(filepath.Dir(s.room.SessionDir()), s.room.LogPath())
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	if !s.needRoom(w) {
		return
	}
	q := r.URL.Query()
	before := int64(-1)
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			fail(w, http.StatusBadRequest, "before must be an offset >= 0")
			return
		}
		before = n
	}
	limit := DefaultTimelinePage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxTimelinePage {
			fail(w, http.StatusBadRequest, fmt.Sprintf("limit must be 1 to %d", MaxTimelinePage))
			return
		}
		limit = n
	}
	keep, err := filterFrom(r)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	out := TimelinePage{Events: []TimelineEvent{}}
	if before == 0 {
		writeJSON(w, http.StatusOK, out)
		return
	}
	if err := s.ownLog(); err != nil {
		fail(w, http.StatusForbidden, err.Error())
		return
	}
	pg, err := events.ReadBack(s.room.LogPath(), before, limit, keep)
	if errors.Is(err, events.ErrNoLog) {
		out.NoLog = true
		writeJSON(w, http.StatusOK, out)
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	for _, l := range pg.Events {
		out.Events = append(out.Events, TimelineEvent{Offset: l.Offset, Event: pageSafe(l.Event)})
	}
	out.Before, out.More, out.End, out.Skipped = pg.Before, pg.Before > 0, pg.End, pg.Stats.Skipped()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) context(w http.ResponseWriter, r *http.Request) {
	if !s.needRoom(w) {
		return
	}
	c, err := s.room.Context(r.Context())
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// roomStream is the live side of the page: SSE `timeline` events (each
// event appended to the log from offset `from` on) and `context` events
// (the panel's facts, sent when they change).
func (s *Server) roomStream(w http.ResponseWriter, r *http.Request) {
	if !s.needRoom(w) {
		return
	}
	if err := s.ownLog(); err != nil {
		fail(w, http.StatusForbidden, err.Error())
		return
	}
	from, ok := fromParam(w, r, "an offset")
	if !ok {
		return
	}
	f, release, ok := s.openStream(w, "a timeline stream") // the room stream shares the cap of the chat streams
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var mu sync.Mutex // one writer at a time
	send := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		writeEvent(w, e)
		f.Flush()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	send(Event{Name: "hello", Data: map[string]int64{"from": from}})

	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	followErr := make(chan error, 1)
	followDone := make(chan struct{})
	// The follower writes to w: the handler must not return before it does.
	defer func() { cancel(); <-followDone }()
	go func() {
		defer close(followDone)
		_, err := events.Follow(ctx, s.room.LogPath(), from, func(e events.Event) error {
			send(Event{Name: "timeline", Data: liveEvent{Event: pageSafe(e)}})
			poke()
			return nil
		})
		followErr <- err
	}()
	var last []byte
	pushContext := func() {
		c, err := s.room.Context(ctx)
		if err != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil || bytes.Equal(b, last) {
			return
		}
		last = b
		send(Event{Name: "context", Data: json.RawMessage(b)})
	}
	pushContext()
	tick := time.NewTicker(ContextEvery)
	defer tick.Stop()
	keep := time.NewTicker(s.keepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-followErr:
			if ctx.Err() == nil && err != nil {
				send(Event{Name: "notice", Data: map[string]string{"text": "timeline stream ended: " + err.Error()}})
			}
			return
		case <-changed:
			// Coalesce a burst of events (a turn logs several at once).
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			pushContext()
		case <-tick.C:
			pushContext()
		case <-keep.C:
			mu.Lock()
			fmt.Fprint(w, ": keep-alive\n\n")
			f.Flush()
			mu.Unlock()
		}
	}
}

// ErrRefRefused is returned for a ref the page may not open.
var ErrRefRefused = errors.New("refused")

// openRef opens name (a path relative to .ai-session, as events' refs give
// it) for reading: only a regular file below the session folder, reached
// without following any symlink, is served.
func openRef(sessionDir, name string) (*os.File, error) {
	if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, "\\") {
		return nil, fmt.Errorf("%w: bad name", ErrRefRefused)
	}
	clean := path.Clean(name)
	if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, fmt.Errorf("%w: %q is not a file inside .ai-session", ErrRefRefused, name)
	}
	// Every folder on the way, .ai-session included, must be a real folder.
	dir := sessionDir
	parts := strings.Split(clean, "/")
	for i := -1; i < len(parts)-1; i++ {
		if i >= 0 {
			dir = filepath.Join(dir, parts[i])
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a folder (symlinks are not followed)", ErrRefRefused, dir)
		}
	}
	// The one helper: no symlink followed, no FIFO blocks, regular files only.
	f, err := safeio.OpenOwned(filepath.Join(sessionDir, filepath.FromSlash(clean)))
	if errors.Is(err, safeio.ErrNotRegular) {
		return nil, fmt.Errorf("%w: %s is not a regular file (symlinks are not followed)", ErrRefRefused, name)
	}
	return f, err
}

// ref serves a file named in an event's refs, as plain text through
// render.Inert (never HTML: the page shows it with textContent, and
// nosniff keeps the browser from guessing).
func (s *Server) ref(w http.ResponseWriter, r *http.Request) {
	if !s.needRoom(w) {
		return
	}
	name := r.URL.Query().Get("name")
	f, err := openRef(s.room.SessionDir(), name)
	switch {
	case errors.Is(err, ErrRefRefused):
		fail(w, http.StatusForbidden, err.Error())
		return
	case errors.Is(err, fs.ErrNotExist):
		fail(w, http.StatusNotFound, fmt.Sprintf("%s does not exist (any more) in .ai-session", name))
		return
	case err != nil:
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRefBytes+1))
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	cut := len(b) > MaxRefBytes
	if cut {
		b = b[:MaxRefBytes]
	}
	// The one rule for output: the file is repository or model text, and a
	// curl prints it on a terminal as the page shows it, so it leaves only
	// through render.Inert (ESC, BEL, OSC 52, C1, bidi and zero-width
	// characters in visible form).
	b = render.AppendInert(nil, string(b))
	if cut {
		b = append(b, fmt.Sprintf("\n… (cut at %d bytes; the whole file is .ai-session/%s)\n", MaxRefBytes, render.InertLine(name))...)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", "inline")
	_, _ = w.Write(b)
}

// fromParam reads a stream's ?from= (0 when absent); a value that is not
// a number >= 0 is answered 400 ("from must be <what> >= 0") and ok is
// false.
func fromParam(w http.ResponseWriter, r *http.Request, what string) (from int64, ok bool) {
	v := r.URL.Query().Get("from")
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		fail(w, http.StatusBadRequest, "from must be "+what+" >= 0")
		return 0, false
	}
	return n, true
}
