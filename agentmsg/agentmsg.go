// Package agentmsg maps the messages the agent CLIs write onto
// events.Activity, the same whether they are read live (claude's
// stream-json, codex's exec --json, in agents) or from a session's
// transcript or rollout (in transcript): an Anthropic Messages API message
// and its content blocks, a tool call's one-line detail, codex's shell
// command as the model wrote it, and the cuts of the one-line texts. It
// sits below both parsers so that neither imports the other.
package agentmsg

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
)

// An Anthropic Messages API message is the shape carried by claude's
// stream-json "assistant"/"user" lines and by Claude Code transcript lines
// alike: both parsers map it here, so a tool call reads the same wherever it
// came from.

// anthropicMessage is the part of a message the activity stream needs.
type anthropicMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string or a list of blocks
	StopReason string          `json:"stop_reason"`
	Usage      *AnthropicUsage `json:"usage"`
}

// AnthropicUsage is a message's (or a result's) token counts as claude
// writes them.
type AnthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// Usage is u as an activity's usage (nil for nil): cache writes count as
// input.
func (u *AnthropicUsage) Usage() *events.Usage {
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

// Activities maps one Anthropic message to activities, in block
// order: thinking, tool, tool_result and text. Unknown block types are
// skipped. A string content becomes one text activity (for assistant) or one
// user activity (for user). It does not emit ActDone: whether a stop_reason
// ends a turn depends on the source (stream-json vs transcript).
func Activities(source string, raw json.RawMessage) ([]events.Activity, error) {
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

// UnwrapShell turns codex's `/bin/bash -lc 'echo hi'` into `echo hi`: the
// command as the model wrote it. Codex quotes the script as one shell word,
// in single quotes, or in double quotes with backslashes when the script
// holds a single quote (`/bin/bash -lc "printf '\\n' >> f"`), or in a
// mix of both; anything that is not one word is shown as it is.
func UnwrapShell(cmd string) string {
	for _, sh := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/zsh -lc ", "zsh -lc ", "/bin/sh -c ", "sh -c "} {
		rest, ok := strings.CutPrefix(cmd, sh)
		if !ok {
			continue
		}
		if w, ok := shellWord(rest); ok {
			return w
		}
		return rest
	}
	return cmd
}

// shellWord reads s as one POSIX shell word (unquoted, '...' and "..."
// parts, backslash escapes) and returns its value; ok is false when s is
// not exactly one word.
func shellWord(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for {
				if i >= len(s) {
					return "", false
				}
				if s[i] == '"' {
					i++
					break
				}
				// In double quotes a backslash escapes only $ ` " \ and a newline.
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					if s[i+1] != '\n' {
						b.WriteByte(s[i+1])
					}
					i += 2
					continue
				}
				b.WriteByte(s[i])
				i++
			}
		case '\\':
			if i+1 >= len(s) {
				return "", false
			}
			if s[i+1] != '\n' {
				b.WriteByte(s[i+1])
			}
			i += 2
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			return "", false // more than one word, or an operator
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// FirstLine is the first non-blank line of s, cut to LineRunes.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return oneLine(l, LineRunes)
		}
	}
	return ""
}

// oneLine folds s onto one line and cuts it to at most n runes: the one
// truncation helper.
var oneLine = render.Cut
