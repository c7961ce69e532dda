package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
)

// Desk is the Agent Room's engine hosted for the page (room.Host, passed
// in by main): the page's composer takes what the terminal room takes,
// run by the same engine code. Nothing here knows a command: the desk
// previews, waits for the click that names the preview (its id and hash),
// and stops a run as Ctrl-C does.
type Desk interface {
	// Submit runs one line (free text or a slash command) in the
	// background.
	Submit(line string) error
	// Answer answers the waiting preview: "run", "cancel" or "edit" (with
	// text), naming it by id and hash.
	Answer(id, hash, action, text string) error
	// Stop ends the running command (its agent's process tree).
	Stop() error
	// State is what the page shows: busy, the preview waiting, the run
	// lock's holder (JSON).
	State() any
	// Complete completes a partial line (command names, then arguments),
	// as the terminal's Tab does; it returns whole lines.
	Complete(text string) []string
	// Follow hands fn the output pieces after from and the state, then
	// again on every change, until ctx ends.
	Follow(ctx context.Context, from int64, fn func(out []DeskOutput, state any)) error
}

// DeskOutput is one piece of what the hosted room printed.
type DeskOutput struct {
	Seq  int64  `json:"seq"`
	Text string `json:"text"`
	// Kind is "diff" for a diff /diff showed (the page colours its
	// lines), "md" for an agent's reply (the page renders it as
	// Markdown), empty for the rest.
	Kind string `json:"kind,omitempty"`
}

// SetDesk adds the hosted room (composer, previews, Run, Cancel, Stop) to
// the page.
func (s *Server) SetDesk(d Desk) { s.desk = d }

func (s *Server) needDesk(w http.ResponseWriter) bool {
	if s.desk == nil {
		fail(w, http.StatusNotFound, "this server hosts no Agent Room (serve it from inside a git repository)")
		return false
	}
	return true
}

// readJSON reads a POST's JSON body into v (Content-Type
// application/json, at most MaxBody bytes, within bodyTimeout); on
// failure it answers the request itself.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, "POST "+r.URL.Path+" takes Content-Type: application/json")
		return false
	}
	if !s.sameOrigin(r) {
		fail(w, http.StatusForbidden, "cross-origin request refused")
		return false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) // a body that trickles is cut off
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxBody))
			return false
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			w.Header().Set("Connection", "close")
			fail(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s", s.bodyTimeout))
			return false
		}
		fail(w, http.StatusBadRequest, "read body: "+err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		fail(w, http.StatusBadRequest, "body is not JSON: "+err.Error())
		return false
	}
	return true
}

// deskError answers a refusal of the desk: 409 for a conflict (busy, a
// stale preview, another screen's run), 400 for the rest.
func deskError(w http.ResponseWriter, err error) {
	var c interface{ Conflict() bool }
	if errors.As(err, &c) && c.Conflict() {
		fail(w, http.StatusConflict, err.Error())
		return
	}
	fail(w, http.StatusBadRequest, err.Error())
}

// deskRun is POST /api/room/run {"line": "..."}.
func (s *Server) deskRun(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	var req struct {
		Line string `json:"line"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	if err := s.desk.Submit(req.Line); err != nil {
		deskError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, s.desk.State())
}

// deskAnswer is POST /api/room/answer {"id", "hash", "action", "text"}.
func (s *Server) deskAnswer(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	var req struct {
		ID     string `json:"id"`
		Hash   string `json:"hash"`
		Action string `json:"action"`
		Text   string `json:"text"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	if req.ID == "" || req.Hash == "" {
		fail(w, http.StatusBadRequest, "an answer names its preview: id and hash are required")
		return
	}
	if err := s.desk.Answer(req.ID, req.Hash, req.Action, req.Text); err != nil {
		deskError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.desk.State())
}

// deskStop is POST /api/room/stop {}.
func (s *Server) deskStop(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	var req struct{}
	if !s.readJSON(w, r, &req) {
		return
	}
	if err := s.desk.Stop(); err != nil {
		deskError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.desk.State())
}

// deskState is GET /api/room/state.
func (s *Server) deskState(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	writeJSON(w, http.StatusOK, s.desk.State())
}

// deskComplete is GET /api/room/complete?text=/pl: {"completions":
// ["/plan "]}.
func (s *Server) deskComplete(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	text := r.URL.Query().Get("text")
	if len(text) > 4096 {
		fail(w, http.StatusBadRequest, "text over 4096 bytes")
		return
	}
	c := s.desk.Complete(text)
	if c == nil {
		c = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"completions": c})
}

// deskConsole is GET /api/room/console?from=N: SSE `out` events (what the
// hosted room printed after piece N, through render.Inert) and `state`
// events (busy, the preview waiting, the run lock).
func (s *Server) deskConsole(w http.ResponseWriter, r *http.Request) {
	if !s.needDesk(w) {
		return
	}
	from, ok := fromParam(w, r, "a number")
	if !ok {
		return
	}
	f, release, ok := s.openStream(w, "a room console")
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var mu sync.Mutex
	send := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		writeEvent(w, e)
		f.Flush()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.desk.Follow(ctx, from, func(out []DeskOutput, st any) {
			for i := range out {
				out[i].Text = render.Inert(out[i].Text) // model and tool text: shown, never obeyed
			}
			if len(out) > 0 {
				send(Event{Name: "out", Data: out})
			}
			send(Event{Name: "state", Data: st})
		})
	}()
	keep := time.NewTicker(s.keepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case <-done:
			return
		case <-keep.C:
			mu.Lock()
			fmt.Fprint(w, ": keep-alive\n\n")
			f.Flush()
			mu.Unlock()
		}
	}
}
