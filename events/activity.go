package events

import "time"

// ActivityKind says what an agent did.
type ActivityKind string

// The activity kinds, shared by the claude, codex and transcript parsers.
const (
	ActThinking   ActivityKind = "thinking"    // the model is thinking; Text may be empty
	ActTool       ActivityKind = "tool"        // a tool call started: Tool + one-line Detail
	ActToolResult ActivityKind = "tool_result" // a tool call finished: ExitCode when known, IsError
	ActText       ActivityKind = "text"        // reply text, as it arrives
	ActUsage      ActivityKind = "usage"       // token usage and cost
	ActDone       ActivityKind = "done"        // end of turn or run; StopReason says why
	ActError      ActivityKind = "error"       // the agent reported an error
	ActRaw        ActivityKind = "raw"         // a non-JSON output line, passed through
	ActDelivered  ActivityKind = "delivered"   // a chat message reached the session (transcript)
	ActUser       ActivityKind = "user"        // a user turn seen in a transcript
)

// Usage is token usage and cost, as far as the agent reports them.
type Usage struct {
	InputTokens       int64   `json:"inputTokens,omitempty"`
	CachedInputTokens int64   `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64   `json:"outputTokens,omitempty"`
	ReasoningTokens   int64   `json:"reasoningTokens,omitempty"`
	CostUSD           float64 `json:"costUsd,omitempty"`
}

// Plus is u and v summed, field by field.
func (u Usage) Plus(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens, ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens, CostUSD: u.CostUSD + v.CostUSD}
}

// Activity is one thing an agent did, whatever agent and whatever source
// (live CLI output or a session transcript).
type Activity struct {
	Source     string       `json:"source"` // "claude", "codex" or "orchestrator"
	Kind       ActivityKind `json:"kind"`
	Text       string       `json:"text,omitempty"`       // text, thinking, raw line, error message
	Tool       string       `json:"tool,omitempty"`       // tool name (Bash, Read, command_execution, ...)
	Detail     string       `json:"detail,omitempty"`     // one line: description, command, path, pattern
	ExitCode   *int         `json:"exitCode,omitempty"`   // tool or run exit code, when known
	IsError    bool         `json:"isError,omitempty"`    // a tool result or run that failed
	StopReason string       `json:"stopReason,omitempty"` // end_turn, tool_use, ...
	Usage      *Usage       `json:"usage,omitempty"`
	ID         string       `json:"id,omitempty"`      // message or item id, for de-duplication
	Session    string       `json:"session,omitempty"` // session or thread id, when known
	Time       time.Time    `json:"time,omitzero"`
}
