package render

import (
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

func TestTerminalActivities(t *testing.T) {
	var b strings.Builder
	r := NewTerminal(&b, false)
	one := 1
	for _, a := range []events.Activity{
		{Kind: events.ActThinking},
		{Kind: events.ActThinking}, // one line per streak
		{Kind: events.ActTool, Tool: "Bash", Detail: "go test ./..."},
		{Kind: events.ActToolResult, IsError: true, ExitCode: &one},
		{Kind: events.ActToolResult}, // quiet
		{Kind: events.ActText, Text: "\nHello, "},
		{Kind: events.ActText, Text: "world.\nSecond line,"},
		{Kind: events.ActText, Text: " continued.\n\nAfter a blank line.\n"},
		{Kind: events.ActUsage, Usage: &events.Usage{InputTokens: 1}},
		{Kind: events.ActDelivered, Detail: "hook"},
		{Kind: events.ActUser, Text: "a user\nturn"},
		{Kind: events.ActError, Text: "rate limited"},
		{Kind: events.ActDone},
	} {
		r.Activity(events.RoleClaude, a)
	}
	want := `[claude] … thinking
[claude] ⚙ Bash: go test ./...
[claude]   ✗ tool failed (exit 1)
[claude] Hello, world.
[claude] Second line, continued.
[claude] 
[claude] After a blank line.
[claude] → chat message delivered via hook
[you] a user turn
[claude] error: rate limited
[claude] ✓ end of turn
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTerminalGutterOnEveryLine(t *testing.T) {
	var plain, coloured strings.Builder
	NewTerminal(&plain, false).Lines(events.RoleCodex, "one\ntwo\nthree\n")
	if plain.String() != "[codex] one\n[codex] two\n[codex] three\n" {
		t.Fatalf("%q", plain.String())
	}
	c := NewTerminal(&coloured, true)
	c.Activity(events.RoleCodex, events.Activity{Kind: events.ActText, Text: "one\ntwo\nthree"})
	c.EndLine()
	lines := strings.Split(strings.TrimSuffix(coloured.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%q", coloured.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "\x1b[36m[codex]\x1b[0m ") {
			t.Fatalf("line without its coloured gutter: %q", l)
		}
	}
}

// Hostile text from a transcript or an agent: nothing reaches the terminal
// as a control character, in any activity field.
func TestTerminalHostileActivity(t *testing.T) {
	const evil = "x\x1b]0;title\x07\x1b[2J\x1b]52;c;aGk=\x07\u009b31m\x9b\r\x7fy"
	var b strings.Builder
	r := NewTerminal(&b, true)
	for _, a := range []events.Activity{
		{Kind: events.ActText, Text: evil + "\n" + evil},
		{Kind: events.ActTool, Tool: evil, Detail: evil},
		{Kind: events.ActToolResult, IsError: true, Text: evil},
		{Kind: events.ActError, Text: evil},
		{Kind: events.ActRaw, Text: evil},
		{Kind: events.ActDelivered, Detail: evil},
		{Kind: events.ActUser, Text: evil},
	} {
		r.Activity(events.Role(evil), a)
	}
	r.Lines(events.Role(evil), evil)
	out := stripSGR(b.String())
	checkInert(t, evil, out, true)
	if !strings.Contains(out, "x^[]0;title^G^[[2J^[]52;c;aGk=^G\\u009b31m\\x9b^M^?y") {
		t.Fatalf("not shown visibly: %q", out)
	}
}

// stripSGR removes the renderer's own colour codes (ESC [ n m).
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestPanelSanitizes(t *testing.T) {
	now := time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC)
	name, d, ok := Panel(events.Activity{Kind: events.ActText, Text: "hi\x1b[2J<b>\u0085"}, now)
	if !ok || name != "text" || d["text"] != `hi^[[2J<b>\u0085` || d["at"] != now {
		t.Fatalf("%s %v %v", name, d, ok)
	}
	_, d, _ = Panel(events.Activity{Kind: events.ActTool, Tool: "Bash", Detail: "echo \x1b]52;c;x\x07"}, now)
	if d["detail"] != "echo ^[]52;c;x^G" {
		t.Fatalf("%v", d)
	}
	if _, _, ok := Panel(events.Activity{Kind: events.ActText, Text: " \n"}, now); ok {
		t.Fatal("blank text shown")
	}
	if _, _, ok := Panel(events.Activity{Kind: events.ActUsage}, now); ok {
		t.Fatal("usage shown")
	}
}
