package mockapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Exec is a Responses API function_call of codex's shell tool
// (exec_command with {"cmd": command}). Use it in a Step for NewOpenAI.
func Exec(command string) Block {
	return Block{Type: "function_call", Name: "exec_command", Input: map[string]any{"cmd": command}}
}

// FunctionCall is a Responses API function_call of any tool.
func FunctionCall(name string, args any) Block {
	return Block{Type: "function_call", Name: name, Input: args}
}

// OpenAI is a mock OpenAI Responses API. POST /v1/responses answers with
// the next scripted Step as an SSE stream: Text blocks become assistant
// messages (output_text), Exec / FunctionCall blocks become function_call
// items; Thinking blocks become reasoning items. Other requests answer {}.
type OpenAI struct {
	URL   string // base URL including /v1, for the codex provider's base_url
	s     *server
	mu    sync.Mutex
	rules []rule
}

// When makes the mock answer step to any request whose last input item
// (LastInputText: a user message's text, or a function call's output)
// contains substr, before the script is consulted and without advancing
// it. The first matching rule wins; rules stay in force. Use it for turns
// whose arrival time is not fixed, such as a chat message delivered into a
// running Codex session.
func (o *OpenAI) When(substr string, step Step) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rules = append(o.rules, rule{contains: substr, step: step})
}

func (o *OpenAI) match(rec Recorded) (Step, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.rules) == 0 {
		return Step{}, false
	}
	last := LastInputText(rec)
	for _, r := range o.rules {
		if strings.Contains(last, r.contains) {
			return r.step, true
		}
	}
	return Step{}, false
}

// LastInputText returns the text of the last item of a Responses API
// request's input: a message's text parts joined, or a function call
// output.
func LastInputText(r Recorded) string {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if json.Unmarshal(r.Body, &req) != nil || len(req.Input) == 0 {
		return ""
	}
	last := req.Input[len(req.Input)-1]
	if len(last.Output) > 0 {
		var s string
		if json.Unmarshal(last.Output, &s) == nil {
			return s
		}
		return string(last.Output)
	}
	return flatten(last.Content)
}

// NewOpenAI starts a mock Responses API on 127.0.0.1 with a random port;
// Close stops it. Once the script is used up every request answers "done".
func NewOpenAI(steps ...Step) (*OpenAI, error) {
	o := &OpenAI{s: newServer(steps)}
	if err := o.s.listen(http.HandlerFunc(o.serve)); err != nil {
		return nil, err
	}
	o.URL = o.s.url + "/v1"
	return o, nil
}

// Close stops the server, ending any stalled stream.
func (o *OpenAI) Close() { o.s.close() }

// Requests returns the recorded POST /v1/responses requests, in order.
func (o *OpenAI) Requests() []Recorded { return o.s.requests("/v1/responses") }

func (o *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	rec := o.s.record(r)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[]}`)
		return
	}
	step, ok := o.match(rec)
	if !ok {
		step = o.s.take()
	}
	if step.failed(w, func(msg string) any {
		return map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "code": nil}}
	}) {
		return
	}
	in, out := step.tokens()
	e := o.s.startSSE(w, r, step)
	respID := fmt.Sprintf("resp_mock_%d", time.Now().UnixNano())
	if !e.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}}) {
		return
	}
	for i, b := range step.Blocks {
		var item map[string]any
		switch b.Type {
		case "function_call":
			args, _ := json.Marshal(b.Input)
			id := b.ID
			if id == "" {
				id = fmt.Sprintf("call_mock_%d_%d", time.Now().UnixNano(), i)
			}
			item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": b.Name, "arguments": string(args)}
		case "thinking":
			item = map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d", i),
				"summary": []any{map[string]any{"type": "summary_text", "text": b.Text}}}
		default:
			id := fmt.Sprintf("msg_mock_%d", i)
			if !e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i,
				"item": map[string]any{"type": "message", "role": "assistant", "id": id, "content": []any{}}}) {
				return
			}
			if !e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "output_index": i, "content_index": 0, "item_id": id, "delta": b.Text}) {
				return
			}
			item = map[string]any{"type": "message", "role": "assistant", "id": id,
				"content": []any{map[string]any{"type": "output_text", "text": b.Text}}}
		}
		if !e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": item}) {
			return
		}
	}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID,
		"usage": map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out},
	}})
}

// CodexConfig is a codex config.toml that selects the mock provider at
// baseURL with model: no retries and plugins off (nothing reaches for the
// network), no env_key (the mock wants no key, and a key variable is a
// credential relay-baton holds back from agents), and the sandbox's
// writable roots kept out of the shared /tmp (and the .git mount points
// it makes in them).
func CodexConfig(model, baseURL string) string {
	return fmt.Sprintf(`model = %q
model_provider = "mock"

[model_providers.mock]
name = "Mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
unbounded_connection_retries = false

[sandbox_workspace_write]
exclude_slash_tmp = true
`, model, baseURL)
}
