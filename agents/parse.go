package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// Parser turns an agent CLI's stdout, one line at a time, into activities.
// Line never panics and never fails: unknown event types are ignored, lines
// that are not a JSON object come back as one ActRaw activity, blank lines
// as nothing. A Parser is not safe for concurrent use.
type Parser interface {
	Line(line []byte) []events.Activity
	// Outcome is what the lines so far say about the run.
	Outcome() Outcome
}

// Outcome is what an agent's output said about its run.
type Outcome struct {
	Session   string       // claude session id / codex thread id
	FinalText string       // the final answer (claude: result; codex: last agent_message)
	Usage     events.Usage // totals, as reported
	HasUsage  bool
	Done      bool   // a result / turn.completed / turn.failed line was seen
	IsError   bool   // the CLI reported the run as failed
	ErrorText string // the CLI's own error message, first line
	// NotLoggedIn: the CLI refused the run for want of a valid login; its
	// error lines were not passed on as activity (Run says how to log in).
	NotLoggedIn bool
	// Unreachable is codex's first "Reconnecting... waiting for network"
	// (it cannot reach its API and retries): said once as activity, the
	// repeats dropped, and named in the run's summary if it fails.
	Unreachable string
}

// unreachableNotice is the one activity line for a codex that cannot reach
// its API: what it means and what to do, where a slow answer says nothing.
func unreachableNotice(msg string) string {
	return "codex cannot reach its API (" + oneLine(msg, 200) + "); it keeps retrying. Check the network and the provider's base_url in $CODEX_HOME/config.toml, then wait, or press Ctrl-C to cancel the run"
}

// isReconnecting reports whether a codex error event is its retry notice.
func isReconnecting(msg string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(msg)), "reconnecting...")
}

// NewParser returns the parser for agent (Claude or Codex); nil for an
// unknown agent.
func NewParser(agent string) Parser {
	switch agent {
	case Claude:
		return NewClaudeParser()
	case Codex:
		return NewCodexParser()
	}
	return nil
}

// rawLine is the activity for a line that is not a JSON object.
func rawLine(source string, line []byte) []events.Activity {
	return []events.Activity{{Source: source, Kind: events.ActRaw, Text: strings.ToValidUTF8(string(line), "\uFFFD")}}
}

// object reports whether line looks like a JSON object and decodes it.
func object(line []byte, v any) bool {
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	return json.Unmarshal(line, v) == nil
}

// ClaudeParser parses `claude -p --output-format stream-json --verbose`.
type ClaudeParser struct {
	out Outcome
}

// NewClaudeParser returns a parser for claude's stream-json output.
func NewClaudeParser() *ClaudeParser { return &ClaudeParser{} }

// Outcome implements Parser.
func (p *ClaudeParser) Outcome() Outcome { return p.out }

type claudeLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   json.RawMessage `json:"message"`
	// result
	Result       *string                  `json:"result"`
	IsError      bool                     `json:"is_error"`
	TotalCostUSD float64                  `json:"total_cost_usd"`
	Usage        *agentmsg.AnthropicUsage `json:"usage"`
	StopReason   string                   `json:"stop_reason"`
	Errors       []string                 `json:"errors"`
	APIError     json.RawMessage          `json:"api_error_status"`
	// assistant: "authentication_failed" on the synthetic message claude
	// writes when it has no valid login
	Error string `json:"error"`
}

// Line implements Parser.
func (p *ClaudeParser) Line(line []byte) []events.Activity {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var l claudeLine
	if !object(line, &l) {
		return rawLine(Claude, line)
	}
	if l.SessionID != "" {
		p.out.Session = l.SessionID
	}
	switch l.Type {
	case "assistant", "user":
		if len(l.Message) == 0 {
			return nil
		}
		if l.Type == "assistant" && l.Error == "authentication_failed" {
			p.out.NotLoggedIn = true
			return nil
		}
		acts, err := agentmsg.Activities(Claude, l.Message)
		if err != nil {
			return nil
		}
		for i := range acts {
			acts[i].Session = p.out.Session
		}
		return acts
	case "result":
		return p.result(&l)
	}
	return nil
}

func (p *ClaudeParser) result(l *claudeLine) []events.Activity {
	p.out.Done = true
	if l.Result != nil {
		p.out.FinalText = *l.Result
	}
	var acts []events.Activity
	if u := l.Usage.Usage(); u != nil || l.TotalCostUSD != 0 {
		if u == nil {
			u = &events.Usage{}
		}
		u.CostUSD = l.TotalCostUSD
		p.out.Usage = *u
		p.out.HasUsage = true
		acts = append(acts, events.Activity{Source: Claude, Kind: events.ActUsage, Usage: u, Session: p.out.Session})
	}
	failed := l.IsError || (l.Subtype != "" && l.Subtype != "success")
	if failed {
		p.out.IsError = true
		msg := p.out.FinalText
		if msg == "" && len(l.Errors) > 0 {
			msg = strings.Join(l.Errors, "; ")
		}
		if msg == "" {
			msg = l.Subtype
		}
		if status := strings.Trim(string(l.APIError), `"`); status != "" && status != "null" && !strings.Contains(msg, status) {
			msg = "HTTP " + status + ": " + msg
		}
		p.out.ErrorText = agentmsg.FirstLine(msg)
		if p.out.NotLoggedIn || notLoggedInText(Claude, msg) {
			p.out.NotLoggedIn = true
		} else {
			acts = append(acts, events.Activity{Source: Claude, Kind: events.ActError, Text: p.out.ErrorText, IsError: true, Session: p.out.Session})
		}
	}
	stop := l.StopReason
	if stop == "" {
		stop = l.Subtype
	}
	acts = append(acts, events.Activity{Source: Claude, Kind: events.ActDone, StopReason: stop, IsError: failed, Session: p.out.Session})
	return acts
}

// CodexParser parses `codex exec --json`.
type CodexParser struct {
	out     Outcome
	started map[string]bool // item ids whose item.started was seen
	// lastError is the text of the last error line shown as activity.
	lastError string
}

// NewCodexParser returns a parser for codex's --json output.
func NewCodexParser() *CodexParser { return &CodexParser{started: map[string]bool{}} }

// Outcome implements Parser.
func (p *CodexParser) Outcome() Outcome { return p.out }

type codexLine struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Item     *codexItem `json:"item"`
	Usage    *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type codexItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Text             string `json:"text"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	Message          string `json:"message"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"arguments"`
	Query  string          `json:"query"`
	Items  []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Line implements Parser.
func (p *CodexParser) Line(line []byte) []events.Activity {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var l codexLine
	if !object(line, &l) {
		return rawLine(Codex, line)
	}
	s := p.out.Session
	switch l.Type {
	case "thread.started":
		p.out.Session = l.ThreadID
	case "item.started":
		if l.Item != nil {
			return p.itemStarted(l.Item)
		}
	case "item.completed":
		if l.Item != nil {
			return p.itemCompleted(l.Item)
		}
	case "turn.completed":
		p.out.Done = true
		var acts []events.Activity
		if l.Usage != nil {
			u := events.Usage{
				InputTokens:       l.Usage.InputTokens,
				CachedInputTokens: l.Usage.CachedInputTokens,
				OutputTokens:      l.Usage.OutputTokens,
				ReasoningTokens:   l.Usage.ReasoningOutputTokens,
			}
			p.out.Usage, p.out.HasUsage = u, true
			acts = append(acts, events.Activity{Source: Codex, Kind: events.ActUsage, Usage: &u, Session: s})
		}
		return append(acts, events.Activity{Source: Codex, Kind: events.ActDone, StopReason: "end_turn", Session: s})
	case "turn.failed":
		p.out.Done, p.out.IsError = true, true
		msg := "turn failed"
		if l.Error != nil && l.Error.Message != "" {
			msg = l.Error.Message
		}
		done := events.Activity{Source: Codex, Kind: events.ActDone, StopReason: "turn.failed", IsError: true, Session: s}
		if p.out.NotLoggedIn || notLoggedInText(Codex, msg) {
			p.out.ErrorText = agentmsg.FirstLine(msg)
			p.out.NotLoggedIn = true
			return []events.Activity{done}
		}
		if p.lastError == oneLine(msg, 500) {
			// codex 0.171.0 says a refusal twice: an error line, then
			// turn.failed with the same message. It was shown once.
			p.out.ErrorText = agentmsg.FirstLine(msg)
			return []events.Activity{done}
		}
		p.out.ErrorText = agentmsg.FirstLine(msg)
		return []events.Activity{{Source: Codex, Kind: events.ActError, Text: p.out.ErrorText, IsError: true, Session: s}, done}
	case "error":
		msg := l.Message
		if msg == "" && l.Error != nil {
			msg = l.Error.Message
		}
		if isReconnecting(msg) {
			// Measured on codex 0.169.0 with its API unreachable: one
			// {"type":"error","message":"Reconnecting... waiting for network
			// (...)"} every few seconds, for as long as it retries.
			if p.out.Unreachable != "" {
				return nil
			}
			p.out.Unreachable = oneLine(msg, 200)
			return []events.Activity{{Source: Codex, Kind: events.ActError, Text: unreachableNotice(msg), IsError: true, Session: s}}
		}
		if p.out.ErrorText == "" {
			p.out.ErrorText = agentmsg.FirstLine(msg)
		}
		if notLoggedInText(Codex, msg) {
			p.out.NotLoggedIn = true
			return nil
		}
		p.lastError = oneLine(msg, 500)
		return []events.Activity{{Source: Codex, Kind: events.ActError, Text: p.lastError, IsError: true, Session: s}}
	}
	return nil
}

func (p *CodexParser) itemStarted(it *codexItem) []events.Activity {
	act, ok := p.toolActivity(it)
	if !ok {
		return nil
	}
	p.started[it.ID] = true
	return []events.Activity{act}
}

// toolActivity is the ActTool for items that are tool calls.
func (p *CodexParser) toolActivity(it *codexItem) (events.Activity, bool) {
	a := events.Activity{Source: Codex, Kind: events.ActTool, ID: it.ID, Session: p.out.Session, Tool: it.Type}
	switch it.Type {
	case "command_execution":
		a.Detail = oneLine(agentmsg.UnwrapShell(it.Command), agentmsg.DetailRunes)
	case "mcp_tool_call":
		a.Tool = it.Server + "." + it.Tool
		a.Detail = agentmsg.ToolDetail(a.Tool, it.Args)
	case "web_search":
		a.Detail = oneLine(it.Query, agentmsg.DetailRunes)
	case "file_change":
		parts := make([]string, 0, len(it.Changes))
		for _, c := range it.Changes {
			parts = append(parts, c.Kind+" "+c.Path)
		}
		a.Detail = oneLine(strings.Join(parts, ", "), agentmsg.DetailRunes)
	case "todo_list":
		done := 0
		for _, t := range it.Items {
			if t.Completed {
				done++
			}
		}
		a.Detail = fmt.Sprintf("%d/%d done", done, len(it.Items))
	default:
		return a, false
	}
	return a, true
}

func (p *CodexParser) itemCompleted(it *codexItem) []events.Activity {
	s := p.out.Session
	switch it.Type {
	case "agent_message":
		p.out.FinalText = it.Text
		return []events.Activity{{Source: Codex, Kind: events.ActText, Text: it.Text, ID: it.ID, Session: s}}
	case "reasoning":
		return []events.Activity{{Source: Codex, Kind: events.ActThinking, Text: it.Text, ID: it.ID, Session: s}}
	case "error":
		msg := it.Message
		if notLoggedInText(Codex, msg) {
			p.out.NotLoggedIn = true
			return nil
		}
		return []events.Activity{{Source: Codex, Kind: events.ActError, Text: oneLine(msg, 500), IsError: true, ID: it.ID, Session: s}}
	}
	tool, ok := p.toolActivity(it)
	if !ok {
		return nil
	}
	var acts []events.Activity
	if !p.started[it.ID] {
		acts = append(acts, tool)
	}
	delete(p.started, it.ID)
	res := events.Activity{Source: Codex, Kind: events.ActToolResult, Tool: tool.Tool, ID: it.ID, Session: s, ExitCode: it.ExitCode}
	res.IsError = it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
	switch {
	case it.AggregatedOutput != "":
		res.Text = oneLine(it.AggregatedOutput, agentmsg.ResultRunes)
	case it.Error != nil:
		res.Text, res.IsError = oneLine(it.Error.Message, agentmsg.ResultRunes), true
	case it.Status != "":
		res.Text = it.Status
	}
	return append(acts, res)
}

// oneLine folds s onto one line and cuts it to at most n runes: the one
// truncation helper.
var oneLine = render.Cut
