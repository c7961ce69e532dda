package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// This file parses Codex CLI rollout files
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl), one
// line at a time, into the same activities as a Claude Code transcript, so
// the orchestrator lane can follow a running Codex session. Every line is
// {"timestamp", "type", "payload"}; the conversation itself is in the
// "response_item" lines (the model's input and output items, as the
// Responses API names them), and turn boundaries in "event_msg" lines. The
// event_msg lines that repeat a response item (agent_message,
// agent_reasoning, user_message, item_completed, exec_command_end, ...) are
// left alone, so nothing shows twice. The format is internal to Codex and
// changes between releases (measured: 0.40.0, 0.125.0, 0.169.0): unknown
// line and item types are skipped, never an error.

// DeliveredByQueue is the lane of a chat message that `codex queue` put
// into an idle session (Activity.Detail of its ActDelivered).
const DeliveredByQueue = "queue"

// chatMarker starts every framed chat message (prompts.FrameChat).
const chatMarker = "[relay-baton chat message "

// IsRolloutPath reports whether path names a Codex rollout file
// (rollout-*.jsonl), whose lines ParseRolloutLine reads.
func IsRolloutPath(path string) bool {
	b := filepath.Base(path)
	return strings.HasPrefix(b, "rollout-") && strings.HasSuffix(b, ".jsonl")
}

type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type rolloutItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Status    string          `json:"status"`
	Action    *struct {
		Type    string   `json:"type"`
		Query   string   `json:"query"`
		URL     string   `json:"url"`
		Command []string `json:"command"`
	} `json:"action"`
	// event_msg
	TurnID  string `json:"turn_id"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Info    *struct {
		Last *struct {
			Input     int64 `json:"input_tokens"`
			Cached    int64 `json:"cached_input_tokens"`
			Output    int64 `json:"output_tokens"`
			Reasoning int64 `json:"reasoning_output_tokens"`
		} `json:"last_token_usage"`
	} `json:"info"`
	// session_meta
	SessionID string `json:"session_id"`
}

// ParseRolloutLine maps one rollout line to activities:
//   - response_item reasoning: ActThinking (its summary text, often empty);
//   - response_item function_call / custom_tool_call / local_shell_call /
//     web_search_call: ActTool (exec_command shows its command line, as
//     live `codex exec --json` output does), and their outputs ActToolResult
//     (the output's first line, the exit code when the output says it);
//   - response_item message: assistant text is ActText; a user message is
//     ActUser, except the context Codex injects (<environment_context>,
//     AGENTS.md instructions, ...), which yields nothing, and a chat
//     message delivery, which is ActDelivered (Detail "hook" for a Stop
//     hook's <hook_prompt>, "queue" for a framed message that came in as
//     a user turn through `codex queue`);
//   - event_msg task_complete: ActDone; turn_aborted: ActDone with
//     StopReason "aborted: <reason>"; error: ActError; token_count: ActUsage.
//
// Lines that are JSON of another shape yield nothing and no error; only a
// line that is not JSON at all is an error.
func ParseRolloutLine(line []byte) ([]events.Activity, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	var l rolloutLine
	if err := json.Unmarshal(line, &l); err != nil {
		if json.Valid(line) {
			return nil, nil
		}
		return nil, fmt.Errorf("rollout line is not JSON (%d bytes)", len(line))
	}
	if len(l.Payload) == 0 || l.Payload[0] != '{' {
		return nil, nil
	}
	var it rolloutItem
	if json.Unmarshal(l.Payload, &it) != nil {
		return nil, nil
	}
	var acts []events.Activity
	switch l.Type {
	case "response_item":
		acts = rolloutResponseItem(&it)
	case "event_msg":
		acts = rolloutEvent(&it)
	default:
		return nil, nil
	}
	if len(acts) == 0 {
		return nil, nil
	}
	var at time.Time
	if l.Timestamp != "" {
		at, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
	}
	for i := range acts {
		acts[i].Source = Source
		acts[i].Time = at
	}
	return acts, nil
}

func rolloutResponseItem(it *rolloutItem) []events.Activity {
	switch it.Type {
	case "reasoning":
		return []events.Activity{{Kind: events.ActThinking, Text: summaryText(it.Summary), ID: it.ID}}
	case "message":
		text := contentText(it.Content)
		switch it.Role {
		case "assistant":
			if strings.TrimSpace(text) == "" {
				return nil
			}
			return []events.Activity{{Kind: events.ActText, Text: text, ID: it.ID}}
		case "user":
			return rolloutUser(text, it.ID)
		}
	case "function_call":
		return []events.Activity{{Kind: events.ActTool, Tool: rolloutToolName(it.Name), Detail: functionDetail(it.Name, it.Arguments), ID: it.CallID}}
	case "custom_tool_call":
		return []events.Activity{{Kind: events.ActTool, Tool: it.Name, Detail: customDetail(it.Name, it.Input), ID: it.CallID}}
	case "local_shell_call":
		a := events.Activity{Kind: events.ActTool, Tool: "command_execution", ID: it.CallID}
		if it.Action != nil {
			a.Detail = render.Cut(unwrapArgv(it.Action.Command), agentmsg.DetailRunes)
		}
		return []events.Activity{a}
	case "web_search_call":
		a := events.Activity{Kind: events.ActTool, Tool: "web_search", ID: it.ID}
		if it.Action != nil {
			a.Detail = render.Cut(it.Action.Query+it.Action.URL, agentmsg.DetailRunes)
		}
		return []events.Activity{a}
	case "function_call_output", "custom_tool_call_output":
		text, code := toolOutput(it.Output)
		a := events.Activity{Kind: events.ActToolResult, Text: render.Cut(text, agentmsg.ResultRunes), ID: it.CallID, ExitCode: code}
		a.IsError = code != nil && *code != 0
		return []events.Activity{a}
	}
	return nil
}

func rolloutEvent(it *rolloutItem) []events.Activity {
	switch it.Type {
	case "task_complete":
		return []events.Activity{{Kind: events.ActDone, StopReason: "task_complete", ID: it.TurnID}}
	case "turn_aborted":
		r := "aborted"
		if it.Reason != "" {
			r += ": " + it.Reason
		}
		return []events.Activity{{Kind: events.ActDone, StopReason: r, ID: it.TurnID}}
	case "error":
		return []events.Activity{{Kind: events.ActError, Text: render.Cut(it.Message, 500), IsError: true}}
	case "token_count":
		if it.Info == nil || it.Info.Last == nil {
			return nil
		}
		u := it.Info.Last
		return []events.Activity{{Kind: events.ActUsage, Usage: &events.Usage{InputTokens: u.Input, CachedInputTokens: u.Cached, OutputTokens: u.Output, ReasoningTokens: u.Reasoning}}}
	}
	return nil
}

// injectedPrefixes start the user messages Codex writes itself (context for
// the model), not something the user typed.
var injectedPrefixes = []string{"<environment_context>", "<user_instructions>", "<turn_aborted>", "# AGENTS.md instructions", "<permissions instructions>", "<user_shell_command>", "<skills_instructions>", "<subagent_notification>"}

func rolloutUser(text, id string) []events.Activity {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	if i := strings.Index(t, "<hook_prompt"); i >= 0 {
		return []events.Activity{{Kind: events.ActDelivered, Detail: DeliveredByHook, Text: hookPromptText(t[i:]), ID: id}}
	}
	if strings.HasPrefix(t, chatMarker) {
		return []events.Activity{{Kind: events.ActDelivered, Detail: DeliveredByQueue, Text: t, ID: id}}
	}
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(t, p) {
			return nil
		}
	}
	return []events.Activity{{Kind: events.ActUser, Text: text, ID: id}}
}

// hookPromptText returns the reason inside <hook_prompt ...>REASON</hook_prompt>.
func hookPromptText(s string) string {
	if i := strings.IndexByte(s, '>'); i >= 0 {
		s = s[i+1:]
	}
	if j := strings.LastIndex(s, "</hook_prompt>"); j >= 0 {
		s = s[:j]
	}
	s = strings.TrimSpace(s)
	if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	return s
}

// contentText joins the text parts of a message's content (input_text,
// output_text, text; a bare string too).
func contentText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if s, ok := agentmsg.DecodeContent(raw, &parts); !ok {
		return s
	}
	var sb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			if sb.Len() > 0 && p.Text != "" {
				sb.WriteString("\n")
			}
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

func summaryText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if strings.TrimSpace(p.Text) != "" {
			out = append(out, strings.TrimSpace(p.Text))
		}
	}
	return strings.Join(out, "\n")
}

// rolloutToolName names the shell tools as live codex output does
// (command_execution); others keep their name.
func rolloutToolName(name string) string {
	switch name {
	case "exec_command", "shell", "container.exec", "shell_command", "local_shell":
		return "command_execution"
	}
	return name
}

// functionDetail is the one-line detail of a function call: the command of
// a shell tool, else the usual detail of its JSON arguments.
func functionDetail(name, args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return render.Cut(args, agentmsg.DetailRunes)
	}
	for _, k := range []string{"cmd", "command"} {
		switch v := m[k].(type) {
		case string:
			return render.Cut(agentmsg.UnwrapShell(v), agentmsg.DetailRunes)
		case []any:
			argv := make([]string, 0, len(v))
			for _, a := range v {
				if s, ok := a.(string); ok {
					argv = append(argv, s)
				}
			}
			return render.Cut(unwrapArgv(argv), agentmsg.DetailRunes)
		}
	}
	b, _ := json.Marshal(m)
	return agentmsg.ToolDetail(name, b)
}

// unwrapArgv turns ["bash","-lc","echo hi"] into "echo hi".
func unwrapArgv(argv []string) string {
	if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
		return argv[2]
	}
	return strings.Join(argv, " ")
}

// customDetail: for apply_patch, the files it touches; else the input's
// first line.
func customDetail(name, input string) string {
	if name == "apply_patch" {
		var files []string
		for _, l := range strings.Split(input, "\n") {
			for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
				if f, ok := strings.CutPrefix(l, p); ok {
					files = append(files, strings.TrimSpace(f))
				}
			}
		}
		if len(files) > 0 {
			return render.Cut(strings.Join(files, ", "), agentmsg.DetailRunes)
		}
	}
	return agentmsg.FirstLine(input)
}

// toolOutput reads a tool call's output: a string (exec_command's
// "...Process exited with code N\n...Output:\n<text>"), or JSON
// {"output", "metadata": {"exit_code"}} (older shell and apply_patch).
func toolOutput(raw json.RawMessage) (string, *int) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &s)
	} else {
		s = string(raw)
	}
	var j struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &j) == nil && j.Output != nil {
		return agentmsg.FirstLine(*j.Output), j.Metadata.ExitCode
	}
	var code *int
	if i := strings.Index(s, "Process exited with code "); i >= 0 {
		rest := s[i+len("Process exited with code "):]
		if n := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); n > 0 {
			rest = rest[:n]
		}
		if c, err := strconv.Atoi(rest); err == nil {
			code = &c
		}
	}
	if i := strings.Index(s, "\nOutput:\n"); i >= 0 {
		s = s[i+len("\nOutput:\n"):]
	}
	return agentmsg.FirstLine(s), code
}

// RolloutMeta is what the first line of a rollout (session_meta) says.
type RolloutMeta struct {
	ThreadID   string    `json:"id"`
	Cwd        string    `json:"cwd"`
	Originator string    `json:"originator"` // codex_exec, codex-tui, ...
	Source     string    `json:"source"`     // exec, cli, vscode, ...
	CLIVersion string    `json:"cli_version"`
	Started    time.Time `json:"-"`
}

// ParseRolloutMeta decodes a session_meta line; ok is false for any other
// line.
func ParseRolloutMeta(line []byte) (RolloutMeta, bool) {
	var l rolloutLine
	if json.Unmarshal(bytes.TrimSpace(line), &l) != nil || l.Type != "session_meta" || len(l.Payload) == 0 {
		return RolloutMeta{}, false
	}
	var m struct {
		RolloutMeta
		Source    json.RawMessage `json:"source"`
		Timestamp string          `json:"timestamp"`
	}
	if json.Unmarshal(l.Payload, &m) != nil || m.ThreadID == "" {
		return RolloutMeta{}, false
	}
	out := m.RolloutMeta
	if len(m.Source) > 0 && m.Source[0] == '"' {
		_ = json.Unmarshal(m.Source, &out.Source)
	}
	out.Started, _ = time.Parse(time.RFC3339Nano, m.Timestamp)
	return out, true
}

// RolloutTurnState reads the tail of a rollout (the last lines, whole)
// and reports whether a turn is running: a task_started after the last
// task_complete or turn_aborted. known is false when the tail names no turn
// boundary (older rollouts never write task_started).
func RolloutTurnState(tail []byte) (inTurn, known bool) {
	for len(tail) > 0 {
		i := bytes.LastIndexByte(tail[:len(tail)-1], '\n')
		line := tail[i+1:]
		tail = tail[:max(i, 0)]
		if !bytes.Contains(line, []byte(`"event_msg"`)) {
			if i < 0 {
				break
			}
			continue
		}
		switch {
		case bytes.Contains(line, []byte(`"type":"task_started"`)):
			return true, true
		case bytes.Contains(line, []byte(`"type":"task_complete"`)), bytes.Contains(line, []byte(`"type":"turn_aborted"`)):
			return false, true
		}
		if i < 0 {
			break
		}
	}
	return false, false
}
