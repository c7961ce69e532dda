// Package agenttest is test support for driving the real claude and codex
// CLIs offline: the mock servers of package mockapi (the Anthropic Messages
// API and the OpenAI Responses API, SSE on 127.0.0.1 with a random port),
// bound to a test's lifetime, finders for the agent CLI binaries, and
// helpers that build the offline environment each CLI needs (temporary
// HOME / CODEX_HOME, base URLs, a fake key that never comes from an API-key
// variable).
//
// Other packages' end-to-end tests use it too, including tests that run a
// built relay-baton binary: everything a run needs is carried by
// environment variables plus a .relay-baton.json in the repository (see
// ClaudeEnv, CodexEnv and WriteRepoConfig).
package agenttest

import (
	"testing"

	"github.com/relay-baton/relay-baton/mockapi"
)

// The mock servers and their scripts are mockapi's; these names keep the
// tests' spelling.
type (
	Block     = mockapi.Block
	Step      = mockapi.Step
	Recorded  = mockapi.Recorded
	Anthropic = mockapi.Anthropic
	OpenAI    = mockapi.OpenAI
)

// Text is a text block.
func Text(s string) Block { return mockapi.Text(s) }

// Thinking is a thinking block.
func Thinking(s string) Block { return mockapi.Thinking(s) }

// ToolUse is a tool_use block asking the CLI to run tool name with input.
func ToolUse(name string, input any) Block { return mockapi.ToolUse(name, input) }

// Bash is a tool_use block for Claude Code's Bash tool.
func Bash(command string) Block { return mockapi.Bash(command) }

// Exec is a Responses API function_call of codex's shell tool.
func Exec(command string) Block { return mockapi.Exec(command) }

// FunctionCall is a Responses API function_call of any tool.
func FunctionCall(name string, args any) Block { return mockapi.FunctionCall(name, args) }

// Reply is a Step answering with blocks.
func Reply(blocks ...Block) Step { return mockapi.Reply(blocks...) }

// LastUserText returns the text of the last user message of a Messages
// API request.
func LastUserText(r Recorded) string { return mockapi.LastUserText(r) }

// TailText returns the text of every message of a Messages request after
// its last assistant message (see mockapi.TailText).
func TailText(r Recorded) string { return mockapi.TailText(r) }

// LastInputText returns the text of the last input item of a Responses
// API request.
func LastInputText(r Recorded) string { return mockapi.LastInputText(r) }

// NewAnthropic starts a mock Messages API (mockapi.NewAnthropic), closed
// when the test ends.
func NewAnthropic(t testing.TB, steps ...Step) *Anthropic {
	t.Helper()
	a, err := mockapi.NewAnthropic(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// NewOpenAI starts a mock Responses API (mockapi.NewOpenAI), closed when
// the test ends.
func NewOpenAI(t testing.TB, steps ...Step) *OpenAI {
	t.Helper()
	o, err := mockapi.NewOpenAI(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}
