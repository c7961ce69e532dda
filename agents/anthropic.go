package agents

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// This file maps an Anthropic Messages API message (the shape carried by
// claude's stream-json "assistant"/"user" lines and by Claude Code transcript
// lines alike) onto activities. Both the claude parser and the transcript
// parser use it, so a tool call reads the same wherever it came from.

// anthropicMessage is the part of a message the activity stream needs.
type anthropicMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string or a list of blocks
	StopReason string          `json:"stop_reason"`
	Usage      *anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func (u *anthropicUsage) usage() *events.Usage {
	if u == nil {
		return nil
	}
	return &events.Usage{
		InputTokens:       u.InputTokens + u.CacheCreationInputTokens,
		CachedInputTokens: u.CacheReadInputTokens,
		OutputTokens:      u.OutputTokens,
	}
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: string or blocks
	IsError   bool            `json:"is_error"`
}

// MessageActivities maps one Anthropic message to activities, in block
// order: thinking, tool, tool_result and text. Unknown block types are
// skipped. A string content becomes one text activity (for assistant) or one
// user activity (for user). It does not emit ActDone: whether a stop_reason
// ends a turn depends on the source (stream-json vs transcript).
func MessageActivities(source string, raw json.RawMessage) ([]events.Activity, error) {
	var m anthropicMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	return m.activities(source), nil
}

func (m *anthropicMessage) activities(source string) []events.Activity {
	if len(m.Content) == 0 {
		return nil
	}
	if m.Content[0] == '"' {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			return nil
		}
		kind := events.ActText
		if m.Role == "user" {
			kind = events.ActUser
		}
		return []events.Activity{{Source: source, Kind: kind, Text: s, ID: m.ID}}
	}
	var blocks []contentBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil
	}
	out := make([]events.Activity, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "text":
			kind := events.ActText
			if m.Role == "user" {
				kind = events.ActUser
			}
			out = append(out, events.Activity{Source: source, Kind: kind, Text: b.Text, ID: m.ID})
		case "thinking", "redacted_thinking":
			out = append(out, events.Activity{Source: source, Kind: events.ActThinking, Text: b.Thinking, ID: m.ID})
		case "tool_use", "server_tool_use":
			out = append(out, events.Activity{Source: source, Kind: events.ActTool, Tool: b.Name, Detail: ToolDetail(b.Name, b.Input), ID: b.ID})
		case "tool_result":
			out = append(out, events.Activity{Source: source, Kind: events.ActToolResult, Text: oneLine(toolResultText(b.Content), ResultRunes), IsError: b.IsError, ID: b.ToolUseID})
		}
	}
	return out
}

func toolResultText(raw json.RawMessage) string {
	var blocks []contentBlock
	if s, ok := DecodeContent(raw, &blocks); !ok {
		return s
	}
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// DecodeContent reads message content that is either a bare JSON string or
// an array of parts: a string comes back as s (ok false), an array is
// decoded into parts (ok true). Anything else is "" with ok false.
func DecodeContent(raw json.RawMessage, parts any) (s string, ok bool) {
	if s, isString := events.JSONStringValue(raw); isString || len(raw) == 0 {
		return s, false
	}
	return "", json.Unmarshal(raw, parts) == nil
}

// DetailKeys are the tool-input fields worth showing, most telling first.
var DetailKeys = []string{"description", "command", "cmd", "file_path", "path", "pattern", "url", "query", "prompt", "notebook_path", "subject", "skill"}

// ToolDetail is the one-line detail shown for a tool call: its description,
// command, file path, pattern, ... whichever the input has first.
func ToolDetail(tool string, input json.RawMessage) string {
	if len(input) == 0 || input[0] != '{' {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range DetailKeys {
		if s, ok := m[k].(string); ok && s != "" {
			return oneLine(s, DetailRunes)
		}
	}
	return ""
}

// The cuts, in runes, of the one-line texts an activity shows: the
// parsers of live output and of transcripts use the same ones, so that a
// run reads the same live and read back.
const (
	ResultRunes = 200 // a tool result
	DetailRunes = 160 // a tool call's detail (its command, path, query, ...)
	LineRunes   = 300 // a first or last line (of a plan, an error)
)

// oneLine folds s onto one line and cuts it to at most n runes: the one
// truncation helper.
var oneLine = render.Cut
