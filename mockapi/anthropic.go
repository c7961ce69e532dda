// Package mockapi serves scriptable mock model APIs on the loopback
// interface: the Anthropic Messages API that Claude Code speaks and the
// OpenAI Responses API that Codex speaks, both as SSE streams on 127.0.0.1
// with a random port. They let the real claude and codex CLIs run fully
// offline. The end-to-end tests use them (through agents/agenttest) and so
// does `relay-baton selftest`, which checks an installed CLI against the
// contracts relay-baton depends on.
//
// A mock answers each agent-loop request with the next scripted Step, or
// with the Step of the first When rule whose text is in the request's last
// user input; once the script is used up it answers "done".
package mockapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Block is one content block of a scripted assistant reply.
type Block struct {
	Type  string // "text", "thinking" or "tool_use"
	Text  string // text or thinking
	Name  string // tool name (tool_use)
	Input any    // tool input, marshalled to JSON (tool_use)
	ID    string // tool_use id; generated when empty
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Thinking is a thinking block.
func Thinking(s string) Block { return Block{Type: "thinking", Text: s} }

// ToolUse is a tool_use block asking the CLI to run tool name with input.
func ToolUse(name string, input any) Block { return Block{Type: "tool_use", Name: name, Input: input} }

// Bash is a tool_use block for Claude Code's Bash tool.
func Bash(command string) Block {
	return ToolUse("Bash", map[string]any{"command": command, "description": "run " + command})
}

// Step is the mock's answer to one request. The zero Step answers "ok".
type Step struct {
	Blocks     []Block
	StopReason string // default: "tool_use" when a tool_use block is present, else "end_turn"
	// Status, when not 0 or 200, answers with that HTTP status and an error
	// body instead of a stream.
	Status  int
	Message string // error message for Status
	// Delay is slept before each SSE event (a slow stream).
	Delay time.Duration
	// Stall sends the first event(s) of the stream and then hangs until the
	// client goes away or the server is closed.
	Stall bool
	// InputTokens / OutputTokens are reported in usage (defaults 10 / 5).
	InputTokens, OutputTokens int
}

// Reply is a Step answering with blocks.
func Reply(blocks ...Block) Step { return Step{Blocks: blocks} }

// Recorded is one request the mock received.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time // when the request came in
}

// JSON decodes the body into a generic map (nil if it is not JSON).
func (r Recorded) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// server is what both mocks share: a script, recorded requests, stall control.
type server struct {
	mu       sync.Mutex
	steps    []Step
	next     int
	fallback Step
	reqs     []Recorded
	srv      *http.Server
	ln       net.Listener
	url      string
	closing  chan struct{}
	once     sync.Once
}

func (s *server) record(r *http.Request) Recorded {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	return rec
}

// take returns the next scripted step, or the fallback once the script is used up.
func (s *server) take() Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next < len(s.steps) {
		st := s.steps[s.next]
		s.next++
		return st
	}
	return s.fallback
}

func (s *server) requests(path string) []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recorded
	for _, r := range s.reqs {
		if path == "" || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// listen starts serving h on 127.0.0.1 with a random port.
func (s *server) listen(h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("mock API: listen on 127.0.0.1: %w", err)
	}
	s.ln, s.url = ln, "http://"+ln.Addr().String()
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go s.srv.Serve(ln)
	return nil
}

// close ends stalled streams and stops the server; open connections are
// closed, not drained.
func (s *server) close() {
	s.once.Do(func() { close(s.closing) })
	if s.srv != nil {
		s.srv.Close()
	}
}

// failed answers a step scripted to fail: its status, and the API's error
// body for its message (body). It reports whether the step failed.
func (s Step) failed(w http.ResponseWriter, body func(msg string) any) bool {
	if s.Status == 0 || s.Status == http.StatusOK {
		return false
	}
	msg := s.Message
	if msg == "" {
		msg = "mock error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(s.Status)
	b, _ := json.Marshal(body(msg))
	w.Write(b)
	return true
}

// tokens is the step's usage: 10 tokens in and 5 out unless scripted.
func (s Step) tokens() (in, out int) {
	in, out = s.InputTokens, s.OutputTokens
	if in == 0 {
		in = 10
	}
	if out == 0 {
		out = 5
	}
	return in, out
}

// startSSE answers r with an event stream for step.
func (s *server) startSSE(w http.ResponseWriter, r *http.Request, step Step) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, r: r, step: step, closing: s.closing}
}

// sse writes SSE events, honouring Delay and Stall.
type sse struct {
	w       http.ResponseWriter
	r       *http.Request
	step    Step
	closing <-chan struct{}
	n       int
}

func (e *sse) event(name string, data any) bool {
	if e.step.Delay > 0 {
		select {
		case <-time.After(e.step.Delay):
		case <-e.r.Context().Done():
			return false
		case <-e.closing:
			return false
		}
	}
	b, _ := json.Marshal(data)
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return false
	}
	e.w.(http.Flusher).Flush()
	e.n++
	if e.step.Stall && e.n == 1 {
		select {
		case <-e.r.Context().Done():
		case <-e.closing:
		}
		return false
	}
	return true
}

// Anthropic is a mock Anthropic Messages API. POST /v1/messages answers
// with the next scripted Step as an SSE stream; GET requests answer
// {"data":[]}. Requests that carry no tools (Claude Code's side queries:
// titles, summaries, ...) are answered "ok" without consuming the script.
type Anthropic struct {
	URL string // base URL, for ANTHROPIC_BASE_URL
	s   *server

	mu    sync.Mutex
	rules []rule
}

// rule answers a request by its content (When, WhenTail).
type rule struct {
	contains string
	step     Step
	tail     bool // match TailText, not LastUserText
}

// When makes the mock answer step to any agent-loop request (one that
// carries tools) whose last user message (LastUserText) contains substr,
// before the script is consulted and without advancing it. The first
// matching rule wins; rules stay in force. Use it for turns whose arrival
// time is not fixed, such as a chat message delivered into a running
// session.
func (a *Anthropic) When(substr string, step Step) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rules = append(a.rules, rule{contains: substr, step: step})
}

// WhenTail is When matched against TailText: every message after the
// last assistant message, system messages included. Claude Code hands a
// message posted to a busy session's messaging socket to the model as a
// system message after the tool's result, not in the last user message.
func (a *Anthropic) WhenTail(substr string, step Step) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rules = append(a.rules, rule{contains: substr, step: step, tail: true})
}

// match returns the step of the first rule matching rec.
func (a *Anthropic) match(rec Recorded) (Step, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.rules) == 0 {
		return Step{}, false
	}
	last, tail := LastUserText(rec), TailText(rec)
	for _, r := range a.rules {
		if !r.tail && strings.Contains(last, r.contains) || r.tail && strings.Contains(tail, r.contains) {
			return r.step, true
		}
	}
	return Step{}, false
}

// NewAnthropic starts a mock Messages API on 127.0.0.1 with a random port;
// Close stops it. Once the script is used up every request answers "done".
func NewAnthropic(steps ...Step) (*Anthropic, error) {
	a := &Anthropic{s: newServer(steps)}
	if err := a.s.listen(http.HandlerFunc(a.serve)); err != nil {
		return nil, err
	}
	a.URL = a.s.url
	return a, nil
}

func newServer(steps []Step) *server {
	return &server{steps: steps, fallback: Reply(Text("done")), closing: make(chan struct{})}
}

// Close stops the server, ending any stalled stream.
func (a *Anthropic) Close() { a.s.close() }

// Requests returns the recorded POST /v1/messages requests, in order.
func (a *Anthropic) Requests() []Recorded { return a.s.requests("/v1/messages") }

// Agent returns the recorded requests that carried tools: the agent loop's
// turns (what the script answered), in order.
func (a *Anthropic) Agent() []Recorded {
	var out []Recorded
	for _, r := range a.Requests() {
		if m := r.JSON(); m != nil {
			if tools, _ := m["tools"].([]any); len(tools) > 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

// LastUserText returns the text of the last user message of a request
// (string content, text blocks and tool_result contents concatenated).
func LastUserText(r Recorded) string {
	msgs := messagesOf(r)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return flatten(msgs[i].Content)
		}
	}
	return ""
}

// message is one message of a Messages API request.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messagesOf is a request's messages (none when it is not JSON).
func messagesOf(r Recorded) []message {
	var req struct {
		Messages []message `json:"messages"`
	}
	if json.Unmarshal(r.Body, &req) != nil {
		return nil
	}
	return req.Messages
}

// TailText returns the text of every message of a request after its last
// assistant message (user and system alike: tool results, prompts and what
// Claude Code adds), concatenated.
func TailText(r Recorded) string {
	msgs := messagesOf(r)
	start := 0
	for i, m := range msgs {
		if m.Role == "assistant" {
			start = i + 1
		}
	}
	var sb strings.Builder
	for _, m := range msgs[start:] {
		sb.WriteString(flatten(m.Content))
		sb.WriteString("\n")
	}
	return sb.String()
}

func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var sb strings.Builder
	for _, b := range blocks {
		sb.WriteString(b.Text)
		if len(b.Content) > 0 {
			sb.WriteString(flatten(b.Content))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	rec := a.s.record(r)
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[],"has_more":false}`)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/messages") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
		return
	}
	var req struct {
		Model string `json:"model"`
		Tools []any  `json:"tools"`
	}
	_ = json.Unmarshal(rec.Body, &req)
	step := Reply(Text("ok"))
	if len(req.Tools) > 0 {
		if st, ok := a.match(rec); ok {
			step = st
		} else {
			step = a.s.take()
		}
	}
	if step.failed(w, func(msg string) any {
		typ := "api_error"
		if step.Status == 529 {
			typ = "overloaded_error"
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}) {
		return
	}
	in, out := step.tokens()
	model := req.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	e := a.s.startSSE(w, r, step)
	msgID := fmt.Sprintf("msg_mock_%d", time.Now().UnixNano())
	if !e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}}) {
		return
	}
	stop := step.StopReason
	for i, b := range step.Blocks {
		var start, delta map[string]any
		switch b.Type {
		case "thinking":
			start = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			delta = map[string]any{"type": "thinking_delta", "thinking": b.Text}
		case "tool_use":
			id := b.ID
			if id == "" {
				id = fmt.Sprintf("toolu_mock_%d_%d", time.Now().UnixNano(), i)
			}
			start = map[string]any{"type": "tool_use", "id": id, "name": b.Name, "input": map[string]any{}}
			in, _ := json.Marshal(b.Input)
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
			if stop == "" {
				stop = "tool_use"
			}
		default:
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b.Text}
		}
		if !e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}) ||
			!e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}) {
			return
		}
		if b.Type == "thinking" {
			if !e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": "mock-signature"}}) {
				return
			}
		}
		if !e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	if !e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}}) {
		return
	}
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
