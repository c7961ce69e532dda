package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
)

// This file parses Claude Code session transcripts
// (~/.claude/projects/<slug>/<sessionId>.jsonl), one line at a time, into
// the same activities as live claude output. The format is internal to
// Claude Code and gains new line types in most releases: anything unknown is
// skipped, never an error.

// Source is the Activity.Source of activities read from a
// transcript: the running session the room chats with.
const Source = "orchestrator"

// Delivery lanes as they show in a transcript (Activity.Detail of an
// ActDelivered activity).
const (
	DeliveredByHook    = "hook"    // a Stop hook blocked with the message as its reason
	DeliveredByRewake  = "rewake"  // an asyncRewake hook exited 2 with the message
	DeliveredByMonitor = "monitor" // a Monitor tool / background task notification
	// DeliveredBySocket: posted to the session's messaging socket. Claude
	// Code records it as a user line with turnOrigin "peer" when it starts
	// a turn (the session was idle), or as a queued_command attachment
	// whose origin is a peer when a busy turn absorbed it at a tool result.
	DeliveredBySocket = "socket"
)

type transcriptLine struct {
	Type        string          `json:"type"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	TurnOrigin  string          `json:"turnOrigin"`
	Timestamp   string          `json:"timestamp"`
	SessionID   string          `json:"sessionId"`
	UUID        string          `json:"uuid"`
	Message     json.RawMessage `json:"message"`
	Subtype     string          `json:"subtype"`
	// system stop_hook_summary
	HookErrors            []json.RawMessage `json:"hookErrors"`
	PreventedContinuation bool              `json:"preventedContinuation"`
	HasOutput             bool              `json:"hasOutput"`
	Attachment            *struct {
		Type        string          `json:"type"`
		CommandMode string          `json:"commandMode"`
		Prompt      json.RawMessage `json:"prompt"`
		Origin      struct {
			Kind string `json:"kind"`
		} `json:"origin"`
	} `json:"attachment"`
}

// ParseLine maps one transcript line to activities:
//   - assistant lines: thinking, tool (with the same one-line detail as live
//     claude output), text; stop_reason end_turn adds ActDone;
//   - user lines: tool results, user text, and the moments a chat message
//     was delivered (ActDelivered, Detail = the lane): a Stop hook's
//     "Stop hook feedback:" meta line, an asyncRewake <system-reminder>, a
//     task notification (Monitor);
//   - attachment queued_command in task-notification mode: ActDelivered
//     (an event absorbed during a busy turn); in prompt mode from a peer:
//     ActDelivered by the socket (a message posted to the session's
//     messaging socket, absorbed at a tool result);
//   - system turn_duration, and a stop_hook_summary where no hook blocked:
//     ActDone (older transcripts never record stop_reason end_turn).
//
// Consecutive ActDone activities (end_turn, then the summary lines) are
// normal: consumers collapse them.
//
// Sidechain (subagent) lines, unknown types and JSON values that are not
// objects yield nothing and no error. Only a line that is not JSON at all
// is an error.
//
// Most lines are read in one pass without encoding/json (see
// claude_fast.go); the rest go through parseTranscriptLineJSON, with
// the same result.
func ParseLine(line []byte) ([]events.Activity, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] != '{' {
		if !json.Valid(line) {
			return nil, fmt.Errorf("transcript line is not JSON (%d bytes)", len(line))
		}
		return nil, nil
	}
	if acts, ok := fastTranscriptLine(line); ok {
		return acts, nil
	}
	return parseTranscriptLineJSON(line)
}

// A request to the model that failed (the API down, overloaded, a key
// refused) is retried by Claude Code, up to 10 times over minutes, and its
// transcript shows only an api-request line per attempt: a retry names the
// request before it as its base and adds nothing to it (an empty tail;
// a request after a tool call adds the call and its result). Measured with
// claude 2.1.332 against an API answering 500 and 401. The TUI shows the
// error and the attempt; the transcript does not, so the activity says
// what it can.

// RetryDetail marks the ActError of a retried model request.
const RetryDetail = "retry"

// RetryText is what a retried model request shows.
const RetryText = "the session's request to the model failed and Claude Code is retrying it (the API may be down or refusing it; the session's terminal shows the error and the attempt)"

// retriedRequest reports whether an api-request line is a retry: a base,
// and an empty tail.
func retriedRequest(line []byte) bool {
	var r struct {
		Base string            `json:"base"`
		Tail []json.RawMessage `json:"tail"`
	}
	return json.Unmarshal(line, &r) == nil && r.Base != "" && r.Tail != nil && len(r.Tail) == 0
}

// parseTranscriptLineJSON is ParseLine with encoding/json: what the
// single-pass path (claude_fast.go) is tested against, and the path for
// lines of a shape that one leaves alone. line is trimmed and
// starts with '{'.
func parseTranscriptLineJSON(line []byte) ([]events.Activity, error) {
	var l transcriptLine
	if err := json.Unmarshal(line, &l); err != nil {
		if json.Valid(line) {
			return nil, nil // JSON of a shape we do not know (say "type": 5): skip
		}
		return nil, fmt.Errorf("transcript line: %w", err)
	}
	if l.IsSidechain {
		return nil, nil
	}
	var at time.Time
	if l.Timestamp != "" {
		at, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
	}
	stamp := func(acts []events.Activity) []events.Activity {
		for i := range acts {
			acts[i].Session = l.SessionID
			acts[i].Time = at
		}
		return acts
	}
	switch l.Type {
	case "assistant":
		if len(l.Message) == 0 {
			return nil, nil
		}
		acts, err := agentmsg.Activities(Source, l.Message)
		if err != nil {
			return nil, nil // a shape we do not know: skip, do not fail
		}
		var m struct {
			ID         string `json:"id"`
			StopReason string `json:"stop_reason"`
		}
		_ = json.Unmarshal(l.Message, &m)
		// Claude Code writes one line per content block, each carrying the
		// message's final stop_reason: a thinking block's line is not the
		// end of the turn, the text that follows it is (measured with
		// 2.1.328; a turn ending in thinking alone still ends with the
		// stop_hook_summary / turn_duration line).
		if m.StopReason == "end_turn" && hasOutput(acts) {
			acts = append(acts, events.Activity{Source: Source, Kind: events.ActDone, StopReason: m.StopReason, ID: m.ID})
		}
		return stamp(acts), nil
	case "user":
		if len(l.Message) == 0 {
			return nil, nil
		}
		text, isText := userText(l.Message)
		if isText {
			if lane, body, ok := deliveredText(l.IsMeta, l.TurnOrigin, text); ok {
				return stamp([]events.Activity{{Source: Source, Kind: events.ActDelivered, Detail: lane, Text: body, ID: l.UUID}}), nil
			}
			if l.IsMeta {
				return nil, nil // harness-injected context, not the user speaking
			}
		}
		acts, err := agentmsg.Activities(Source, l.Message)
		if err != nil {
			return nil, nil
		}
		return stamp(acts), nil
	case "system":
		// Transcripts before 2.1.3xx carry stop_reason null on every line:
		// the end of a turn shows as turn_duration, or as a Stop hook
		// summary where no hook blocked.
		switch {
		case l.Subtype == "turn_duration",
			l.Subtype == "stop_hook_summary" && len(l.HookErrors) == 0 && !l.PreventedContinuation && !l.HasOutput:
			return stamp([]events.Activity{{Source: Source, Kind: events.ActDone, StopReason: l.Subtype, ID: l.UUID}}), nil
		}
	case "api-request":
		if retriedRequest(line) {
			return stamp([]events.Activity{{Source: Source, Kind: events.ActError, Detail: RetryDetail, Text: RetryText, ID: l.UUID}}), nil
		}
	case "attachment":
		if a := l.Attachment; a != nil && a.Type == "queued_command" && a.CommandMode == "task-notification" {
			var body string
			if len(a.Prompt) > 0 && a.Prompt[0] == '"' {
				_ = json.Unmarshal(a.Prompt, &body)
			}
			return stamp([]events.Activity{{Source: Source, Kind: events.ActDelivered, Detail: DeliveredByMonitor, Text: eventText(body), ID: l.UUID}}), nil
		}
		if a := l.Attachment; a != nil && a.Type == "queued_command" && a.CommandMode == "prompt" && a.Origin.Kind == "peer" {
			var body string
			if len(a.Prompt) > 0 && a.Prompt[0] == '"' {
				_ = json.Unmarshal(a.Prompt, &body)
			}
			return stamp([]events.Activity{{Source: Source, Kind: events.ActDelivered, Detail: DeliveredBySocket, Text: strings.TrimSpace(body), ID: l.UUID}}), nil
		}
	}
	return nil, nil
}

// hasOutput reports whether acts hold text or a tool call (not only
// thinking or usage).
func hasOutput(acts []events.Activity) bool {
	for _, a := range acts {
		if a.Kind == events.ActText || a.Kind == events.ActTool {
			return true
		}
	}
	return false
}

// userText returns the text of a user message whose content is a string or
// a list holding only text blocks.
func userText(raw json.RawMessage) (string, bool) {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil || len(m.Content) == 0 {
		return "", false
	}
	if m.Content[0] == '"' {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			return "", false
		}
		return s, true
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &blocks) != nil || len(blocks) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type != "text" {
			return "", false
		}
		sb.WriteString(b.Text)
	}
	return sb.String(), true
}

// deliveredText recognises the moments a chat message reached the session.
func deliveredText(isMeta bool, turnOrigin, text string) (lane, body string, ok bool) {
	switch {
	case strings.Contains(text, "<system-reminder>") && strings.Contains(text, "Stop hook"):
		// asyncRewake: Claude Code wraps the hook's stderr in a system reminder.
		inner := text
		if i := strings.Index(inner, "<system-reminder>"); i >= 0 {
			inner = inner[i+len("<system-reminder>"):]
		}
		if i := strings.LastIndex(inner, "</system-reminder>"); i >= 0 {
			inner = inner[:i]
		}
		return DeliveredByRewake, strings.TrimSpace(inner), true
	case isMeta && strings.HasPrefix(text, "Stop hook feedback:"):
		return DeliveredByHook, strings.TrimSpace(strings.TrimPrefix(text, "Stop hook feedback:")), true
	case turnOrigin == "peer":
		// The messaging socket, into an idle session: Claude Code puts a
		// line of its own before the text and a note after it.
		return DeliveredBySocket, peerText(text), true
	case turnOrigin == "task_notification" || strings.HasPrefix(strings.TrimSpace(text), "<task-notification>"):
		return DeliveredByMonitor, eventText(text), true
	}
	return "", "", false
}

// peerText is the posted text of a message Claude Code delivered from its
// messaging socket: between its first line ("Another Claude session sent
// a message:") and its closing note ("This came from another Claude
// session ..."), or the whole text trimmed when the shape is another.
func peerText(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(first, "Another Claude session sent a message") {
		return strings.TrimSpace(s)
	}
	if i := strings.LastIndex(rest, "\n\nThis came from another Claude session"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

// eventText extracts <event>...</event> from a task notification, or
// returns the whole text trimmed.
func eventText(s string) string {
	if i := strings.Index(s, "<event>"); i >= 0 {
		rest := s[i+len("<event>"):]
		if j := strings.Index(rest, "</event>"); j >= 0 {
			return strings.TrimSpace(rest[:j])
		}
	}
	return strings.TrimSpace(s)
}
