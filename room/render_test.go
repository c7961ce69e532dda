package room

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

func TestRenderActivity(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, false, false)
	p.beginRun("codex")
	one := 1
	for _, a := range []events.Activity{
		{Kind: events.ActThinking},
		{Kind: events.ActThinking}, // one line per thinking streak
		{Kind: events.ActTool, Tool: "command_execution", Detail: "go test ./..."},
		{Kind: events.ActToolResult, IsError: true, ExitCode: &one},
		{Kind: events.ActToolResult}, // successful results stay quiet
		{Kind: events.ActText, Text: "Hello,"},
		{Kind: events.ActText, Text: "world."}, // a block of its own
		{Kind: events.ActUsage, Usage: &events.Usage{InputTokens: 10, CachedInputTokens: 2, OutputTokens: 5, CostUSD: 0.5}},
		{Kind: events.ActThinking},
		{Kind: events.ActError, Text: "rate limited"},
		{Kind: events.ActRaw, Text: "Reading additional input from stdin..."},
	} {
		p.activity(a)
	}
	p.endRun(agents.Result{Agent: "codex", ExitCode: 1, Duration: 1500 * time.Millisecond}, events.Usage{})
	want := `[codex] … thinking
[codex] ⚙ command_execution: go test ./...
[codex]   ✗ tool failed (exit 1)
[codex] Hello,
[codex] world.
[codex] … thinking
[codex] error: rate limited
[codex] Reading additional input from stdin...
[relay-baton] codex: exit 1 · 1.5s · $0.50 · 12 in / 5 out tokens
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRenderColourOnlyWhenAsked(t *testing.T) {
	var plain, coloured bytes.Buffer
	newPrinter(&plain, false, false).say(events.RoleClaude, "hi")
	newPrinter(&coloured, true, false).say(events.RoleClaude, "hi")
	if strings.Contains(plain.String(), "\x1b") || !strings.Contains(coloured.String(), "\x1b[") {
		t.Fatalf("plain %q coloured %q", plain.String(), coloured.String())
	}
}

func TestPulseUsesNoEscapeCodes(t *testing.T) {
	var b safeBuffer
	p := newPrinter(&b, false, true)
	p.beginRun("claude")
	// Wait for the pulse to draw (a hang guard, not a bound).
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(b.String(), "claude thinking"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the pulse never drew: %q", b.String())
		}
	}
	p.activity(events.Activity{Kind: events.ActText, Text: "answer\n"})
	p.endRun(agents.Result{Agent: "claude"}, events.Usage{})
	out := b.String()
	if !strings.Contains(out, "claude thinking") || strings.Contains(out, "\x1b") {
		t.Fatalf("%q", out)
	}
	if !strings.Contains(out, "[claude] answer\n") {
		t.Fatalf("%q", out)
	}
}

// safeBuffer is written by the pulse goroutine and read by the test while
// the pulse runs.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func TestRenderShowsTerminalControl(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, false, false)
	p.beginRun("claude")
	p.activity(events.Activity{Kind: events.ActText, Text: "ok\x1b]0;pwned\x07 \x1b[2Jdone\r\nline two \u009b31m\x9b\n"})
	p.activity(events.Activity{Kind: events.ActTool, Tool: "Bash", Detail: "echo \x1b[31mred"})
	p.endRun(agents.Result{Agent: "claude"}, events.Usage{})
	if strings.ContainsAny(b.String(), "\x1b\x07\r\u009b") || strings.Contains(b.String(), "\x9b") {
		t.Fatalf("%q", b.String())
	}
	for _, want := range []string{"[claude] ok^[]0;pwned^G ^[[2Jdone^M\n", "[claude] line two \\u009b31m\\x9b\n", "[claude] ⚙ Bash: echo ^[[31mred\n"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("%q lacks %q", b.String(), want)
		}
	}
}

func TestRenderEveryReplyLineLabelled(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, false, false)
	p.beginRun("claude")
	p.activity(events.Activity{Kind: events.ActText, Text: "Plan:\n1. parse"})
	p.activity(events.Activity{Kind: events.ActText, Text: "\n2. test\n3. ship\n"})
	p.say(events.RoleRelayBaton, "two\nlines")
	p.endRun(agents.Result{Agent: "claude"}, events.Usage{})
	want := "[claude] Plan:\n[claude] 1. parse\n[claude] 2. test\n[claude] 3. ship\n[relay-baton] two\n[relay-baton] lines\n[relay-baton] claude: exit 0 · 0s\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
