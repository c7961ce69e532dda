package room

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/screens"
)

// Host is the room's engine hosted for a second screen (the page of
// relay-baton serve): the same Engine, the same commands and previews as
// the terminal room, driven by requests instead of a line editor. It is
// the page's frontend of the engine, as repl is the terminal's: it gives
// the engine a Terminal that is a Confirmer (a preview waits for a click
// that names it: its id and the hash of what it showed), a writer whose
// output the page follows, and a Stop that does what Ctrl-C does. One
// command runs at a time.
type Host struct {
	e    *Engine
	view *View // the log's state: the active agent another screen chose
	ctx  context.Context

	wg      sync.WaitGroup // the running turn
	mu      sync.Mutex
	turn    *hostTurn
	pending *hostPending
	active  string       // the engine's active agent after the last command (the engine is not read while it runs)
	out     []HostOutput // the newest output, at most hostOutputMax bytes
	outN    int
	seq     int64
	changed chan struct{} // closed and replaced on every change
	version int64         // counts the changes
	forget  func()        // removes the page's screen record (package screens)
}

// HostOutput is one piece of what the engine printed, numbered.
type HostOutput struct {
	Seq  int64  `json:"seq"`
	Text string `json:"text"`
	// Kind is "diff" for a diff /diff showed (made inert; the page
	// colours its lines), "md" for an agent's reply text (the page
	// renders it as Markdown), empty for the rest.
	Kind string `json:"kind,omitempty"`
}

// hostOutputMax bounds the output a Host keeps for a page that connects
// later (the log keeps every turn).
const hostOutputMax = 512 << 10

type hostTurn struct {
	ctx     context.Context
	line    string
	started time.Time
	cancel  context.CancelFunc
	stopped bool
}

type hostPending struct {
	p      Preview
	hash   string
	world  string // what the preview's prompt was made from (plan.md, HEAD)
	answer chan Answer
}

// HostState is what the page shows of the hosted room.
type HostState struct {
	Busy    bool      `json:"busy"`
	Line    string    `json:"line,omitempty"` // the command that runs
	Since   time.Time `json:"since,omitzero"`
	Stopped bool      `json:"stopped,omitempty"`
	Active  string    `json:"active"`
	// Preview waits for its answer; Hash is what the answer must name.
	Preview *Preview `json:"preview,omitempty"`
	Hash    string   `json:"hash,omitempty"`
	// Held is another screen's agent run holding the repository (nothing
	// that would start a run is offered); HeldText says it in words.
	Held     *RunHolder `json:"held,omitempty"`
	HeldText string     `json:"heldText,omitempty"`
	// Running: this room's own agent run holds the repository.
	Running bool  `json:"running,omitempty"`
	Seq     int64 `json:"seq"` // the last output's number
	// Version counts the host's changes: a screen keeps the newest state
	// it was given (a request's answer may arrive after the stream's).
	Version int64 `json:"version"`
}

// HostError is a request the hosted room refuses: Code is "busy" (a
// command runs), "stale" (the answer names a preview that is not the one
// waiting, or one that no longer holds), "held" (another screen's run
// holds the repository), "none" (nothing to stop) or "refused" (a
// command the page does not take).
type HostError struct {
	Code string
	Msg  string
}

func (e *HostError) Error() string { return e.Msg }

// Conflict marks the errors the page's server answers 409.
func (e *HostError) Conflict() bool { return e.Code != "refused" }

// NewHost opens the room for cfg.Dir hosted for a second screen: the
// engine's terminal and output are the host's (no colour, no pulse), and
// its runs are recorded as the page's in the run lock. ctx bounds every
// command it runs. v is the view of the same repository the page's
// context panel reads (serve's), so the log is read once for both: the
// host takes the active agent and the conversations another screen
// chose from it before each command; nil opens a view of its own. Close
// the engine (Engine().Close) when done.
func NewHost(ctx context.Context, cfg Config, v *View) (*Host, error) {
	h := &Host{ctx: ctx, changed: make(chan struct{})}
	cfg.Out, cfg.Term, cfg.Color, cfg.Spinner = hostWriter{h}, h, false, false
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	h.e, h.active = e, e.Active
	if v != nil && v.Root == e.Root {
		h.view = v
	} else if v, err := OpenView(e.Root, e.Diet); err == nil {
		h.view = v
	}
	e.SetScreen("relay-baton serve's page")
	h.forget = screens.Announce(e.SessionDir, e.SessionID, screens.Page, e.lock.Screen()) // a terminal room labels the page's turns
	return h, nil
}

// Close waits for the running command to end (end the context NewHost
// was given first to stop it) and closes the engine.
func (h *Host) Close() error {
	h.wg.Wait()
	h.forget()
	return h.e.Close()
}

// Engine is the hosted engine.
func (h *Host) Engine() *Engine { return h.e }

type hostWriter struct{ h *Host }

func (w hostWriter) Write(b []byte) (int, error) {
	w.h.print(string(b))
	return len(b), nil
}

// WriteReply shows an agent's reply text as a block the page renders as
// Markdown (kind "md"; the server makes it inert, the page builds it as
// text nodes), after its speaker's label, as the terminal shows it.
func (w hostWriter) WriteReply(agent, text string) {
	w.h.print("[" + agent + "]\n")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	w.h.printKind(text, "md")
}

func (h *Host) print(s string) { h.printKind(s, "") }

// ShowDiff prints diff (already inert) as a diff the page colours.
func (h *Host) ShowDiff(diff string) {
	if !strings.HasSuffix(diff, "\n") {
		diff += "\n"
	}
	h.printKind(diff, "diff")
}

func (h *Host) printKind(s, kind string) {
	if s == "" {
		return
	}
	h.mu.Lock()
	h.seq++
	h.out = append(h.out, HostOutput{Seq: h.seq, Text: s, Kind: kind})
	h.outN += len(s)
	for h.outN > hostOutputMax && len(h.out) > 1 {
		h.outN -= len(h.out[0].Text)
		h.out = h.out[1:]
	}
	h.changedLocked()
	h.mu.Unlock()
}

func (h *Host) changedLocked() {
	h.version++
	close(h.changed)
	h.changed = make(chan struct{})
}

// pageRefused are the commands the page does not take: they leave the
// room. (/apply and /undo ask through Confirm: their preview, every path
// and its hunks, waits for a click as an agent run's does.)
var pageRefused = map[string]string{
	"exit": "the page's room stays open while relay-baton serve runs: close the tab, or stop serve with Ctrl-C",
}

// Submit runs one line of the room's language (free text to the active
// agent, or a slash command) as the terminal room would, in the
// background: what it prints is the page's output, and a preview it makes
// waits for Answer.
func (h *Host) Submit(line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return &HostError{Code: "refused", Msg: "nothing to run: type a message for the active agent, or a command (/help lists them)"}
	}
	if l, err := Parse(line); err == nil && l.Cmd != nil {
		if why, ok := pageRefused[l.Cmd.Name]; ok {
			return &HostError{Code: "refused", Msg: why}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.turn; t != nil {
		return &HostError{Code: "busy", Msg: fmt.Sprintf("%q runs in the page: wait for it to end, or Stop it", summary(t.line, 80))}
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.turn = &hostTurn{ctx: ctx, line: line, started: time.Now(), cancel: cancel}
	h.changedLocked()
	h.wg.Add(1)
	go h.run(ctx, cancel, line)
	return nil
}

// run runs line until it ends; a preview refused as stale is made again
// from things as they are now.
func (h *Host) run(ctx context.Context, cancel context.CancelFunc, line string) {
	defer h.wg.Done()
	defer func() {
		cancel()
		h.mu.Lock()
		h.turn, h.active = nil, h.e.Active
		h.changedLocked()
		h.mu.Unlock()
	}()
	h.e.SayAs("user", "%s", line)
	for {
		h.sync()
		_, err := h.e.Process(ctx, line)
		if errors.Is(err, ErrStale) && ctx.Err() == nil {
			h.e.Say("the preview no longer held; here it is again, made from things as they are now.")
			continue
		}
		cancelled := ctx.Err() != nil && h.ctx.Err() == nil
		switch {
		case err == nil, errors.Is(err, ErrDeclined), errors.Is(err, agents.ErrNotLoggedIn), errors.As(err, new(*agents.MissingEnvError)), cancelled && Told(err):
		case cancelled:
			h.e.Say("stopped (Stop in the page): %v", err)
		default:
			h.e.Say("error: %v", err)
		}
		return
	}
}

// sync takes the active agent and the agents' conversations from the log
// before a command: another screen (a terminal room) may have switched the
// agent, continued a conversation or started a new one (/new).
func (h *Host) sync() {
	if h.view == nil {
		return
	}
	logged := h.view.conversations()
	for _, a := range []string{agents.Claude, agents.Codex} {
		c, ok := logged[a]
		have := h.e.convs.m[a]
		switch {
		case !ok && have != nil:
			delete(h.e.convs.m, a)
		case ok && (have == nil || have.ID != c.ID):
			if h.e.convs.m == nil {
				h.e.convs.m = map[string]*AgentConversation{}
			}
			h.e.convs.m[a] = &AgentConversation{ID: c.ID, Turns: c.Turns, InputTokens: c.InputTokens, Reported: c.Reported}
		}
	}
	active, target, _, _, err := h.view.state()
	if err != nil || active == "" || active == h.e.Active {
		return
	}
	switch active {
	case agents.Claude, agents.Codex:
		h.e.Active = active
	case AgentOrchestrator:
		_ = h.e.UseOrchestrator(target)
	}
}

// Ask answers the questions a preview does not ask (the page takes none
// of the commands that ask them): no.
func (h *Host) Ask(question string) (string, error) {
	h.e.Say("%s: answered no (this question is answered only in the terminal room)", strings.TrimSpace(question))
	return "", nil
}

// Edit: the page edits in its own text area (Answer.Edited).
func (h *Host) Edit(string) (string, error) { return "", ErrNoEditor }

// Confirm shows p to the page and waits for the click that names it (or
// Stop, a no).
func (h *Host) Confirm(p Preview) Answer {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	w := &hostPending{p: p, hash: hex.EncodeToString(sum[:]), answer: make(chan Answer, 1)}
	if p.Agent != AgentOrchestrator && p.Change == "" {
		w.world = h.world()
	}
	h.mu.Lock()
	h.pending = w
	var done <-chan struct{}
	if h.turn != nil {
		done = h.turn.ctx.Done() // Stop ends it
	}
	h.changedLocked()
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.pending == w {
			h.pending = nil
			h.changedLocked()
		}
		h.mu.Unlock()
	}()
	select {
	case a := <-w.answer:
		return a
	case <-done:
		return Answer{Why: "stopped in the page"}
	}
}

// world is what a run's prompt is made from besides what was typed:
// plan.md and HEAD. A change between the preview and the click makes the
// preview stale.
func (h *Host) world() string {
	plan, _ := readDoc(h.e.planMD.path())
	head := gitrepo.Head(h.ctx, h.e.Root)
	sum := sha256.Sum256(append(plan, "\x00"+head...))
	return hex.EncodeToString(sum[:])
}

// Answer answers the waiting preview: action "run", "cancel" or "edit"
// (with text). id and hash must name the preview waiting now, as the page
// was shown it; a run also needs the repository free of another screen's
// run and plan.md and HEAD as they were at the preview.
func (h *Host) Answer(id, hash, action, text string) error {
	h.mu.Lock()
	w := h.pending
	h.mu.Unlock()
	if w == nil {
		return &HostError{Code: "stale", Msg: "no preview waits for an answer (it was answered, cancelled or stopped): nothing ran"}
	}
	if id != w.p.ID || hash != w.hash {
		return &HostError{Code: "stale", Msg: "this is not the preview that waits now (the page showed an older one): nothing ran; the page shows the current one"}
	}
	var a Answer
	switch action {
	case "cancel":
		a = Answer{Why: "declined"}
	case "edit":
		if w.p.Change != "" {
			return &HostError{Code: "refused", Msg: "/" + w.p.Command + "'s preview is not edited: Run or Cancel it"}
		}
		if strings.TrimSpace(text) == "" {
			return &HostError{Code: "refused", Msg: "the edited " + nounOf(w.p) + " is empty: nothing changed"}
		}
		a = Answer{Edited: text}
	case "run":
		// A change to the user's files (/apply, /undo) rechecks them
		// itself when it runs: a file changed since the preview makes it
		// write nothing (runs.ErrMoved).
		if w.p.Agent != AgentOrchestrator && w.p.Change == "" {
			if held := h.e.lock.HeldElsewhere(); held != nil {
				return &HostError{Code: "held", Msg: (&RunHeldError{Holder: held, Now: h.e.now()}).Error()}
			}
			if w.world != h.world() {
				a = Answer{Stale: "plan.md or HEAD changed after the preview"}
			} else {
				a = Answer{Yes: true}
			}
		} else {
			a = Answer{Yes: true}
		}
	default:
		return &HostError{Code: "refused", Msg: fmt.Sprintf("unknown answer %q: run, cancel or edit", action)}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending != w {
		return &HostError{Code: "stale", Msg: "the preview was answered meanwhile: nothing more ran"}
	}
	h.pending = nil
	h.changedLocked()
	w.answer <- a
	if a.Stale != "" {
		return &HostError{Code: "stale", Msg: "refused: " + a.Stale + "; nothing ran, and the command is previewed again"}
	}
	return nil
}

func nounOf(p Preview) string {
	if p.Agent == AgentOrchestrator {
		return "message"
	}
	return "prompt"
}

// Stop does what Ctrl-C does in the terminal room: the running command's
// context ends (its agent's process tree with it); a waiting preview is a
// no. The room stays.
func (h *Host) Stop() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.turn
	if t == nil {
		return &HostError{Code: "none", Msg: "nothing runs in the page's room"}
	}
	t.stopped = true
	t.cancel()
	h.changedLocked()
	return nil
}

// Complete completes a partial line as the terminal's Tab does: command
// names after "/", then the command's arguments (only the names while a
// command runs: the engine is not read meanwhile). It returns whole lines.
func (h *Host) Complete(text string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.e
	if h.turn != nil {
		if strings.Contains(text, " ") {
			return nil
		}
		e = nil
	}
	sfx, _ := Complete(e, text)
	out := make([]string, 0, len(sfx))
	for _, s := range sfx {
		out = append(out, text+string(s))
	}
	return out
}

// State is the hosted room as the page shows it now.
func (h *Host) State() HostState {
	held := h.e.lock.HeldElsewhere()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HostState{Active: h.active, Seq: h.seq, Version: h.version, Held: held, Running: h.e.lock.Held()}
	if held != nil {
		s.HeldText = (&RunHeldError{Holder: held, Now: h.e.now()}).Error()
	}
	if t := h.turn; t != nil {
		s.Busy, s.Line, s.Since, s.Stopped = true, t.line, t.started, t.stopped
	}
	if w := h.pending; w != nil {
		p := w.p
		s.Preview, s.Hash = &p, w.hash
	}
	return s
}

// Follow hands fn the output numbered after from (what is still kept),
// then the state, and again on every change, until ctx ends. HeldEvery is
// how often the state is sent again unasked (another screen's run lock).
func (h *Host) Follow(ctx context.Context, from int64, fn func(out []HostOutput, st HostState)) error {
	var last []byte
	for {
		h.mu.Lock()
		var out []HostOutput
		for _, o := range h.out {
			if o.Seq > from {
				out = append(out, o)
			}
		}
		ch := h.changed
		h.mu.Unlock()
		if len(out) > 0 {
			from = out[len(out)-1].Seq
		}
		st := h.State()
		b, _ := json.Marshal(st)
		if len(out) > 0 || string(b) != string(last) {
			last = b
			fn(out, st)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-time.After(HeldEvery):
		}
	}
}

// HeldEvery is how often a followed Host looks at the run lock again.
var HeldEvery = time.Second
