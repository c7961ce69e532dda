package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// mdLines renders text line by line, as a streamed reply is.
func mdLines(text string) []string {
	var m Markdown
	var out []string
	for _, l := range strings.Split(text, "\n") {
		out = append(out, m.Line(l)...)
	}
	return append(out, m.Flush()...)
}

func TestMarkdownBlocks(t *testing.T) {
	reply := "## Goal\n" +
		"Add **bold** and *emphasis*, `code` and a [link](https://example.com/x).\n" +
		"- first\n" +
		"  - nested\n" +
		"1. one\n" +
		"> quoted\n" +
		"---\n" +
		"```go\n" +
		"x := **not bold**\n" +
		"```\n" +
		"| file | lines |\n" +
		"|:-----|------:|\n" +
		"| greet.py | 3 |\n" +
		"| test_greet.py | 12 |\n" +
		"after the table"
	got := mdLines(reply)
	plain := make([]string, len(got))
	for i, l := range got {
		plain[i] = stripSGR(l)
	}
	want := []string{
		"Goal",
		"Add bold and emphasis, code and a link (https://example.com/x).",
		"• first",
		"  ◦ nested",
		"1. one",
		"▎ quoted",
		strings.Repeat("─", 40),
		"╭─ go",
		"│ x := **not bold**",
		"╰─",
		"file          │ lines",
		"──────────────┼──────",
		"greet.py      │     3",
		"test_greet.py │    12",
		"after the table",
	}
	if strings.Join(plain, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rendered:\n%s\nwant:\n%s", strings.Join(plain, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(got[0], "\x1b[1;4m") && !strings.Contains(got[0], "\x1b[1m") {
		t.Fatalf("the heading is not bold: %q", got[0])
	}
	if !strings.Contains(got[1], "\x1b[1mbold\x1b[") || !strings.Contains(got[1], "\x1b[3memphasis\x1b[") {
		t.Fatalf("strong and emphasis not rendered: %q", got[1])
	}
}

// Markdown that is not: snake_case, a lone pipe, an unclosed star, a
// table without its delimiter row, stay as written.
func TestMarkdownLeavesProseAlone(t *testing.T) {
	for _, s := range []string{
		"call read_file_now and snake_case_name",
		"| not a table",
		"2 * 3 = 6 and 4 * 5",
		"a #hashtag, not a heading",
		"#notaheading",
	} {
		got := mdLines(s)
		if len(got) != 1 || got[0] != s {
			t.Errorf("%q rendered as %q", s, got)
		}
	}
	got := mdLines("| a | b |\n| c | d |")
	if len(got) != 2 || got[0] != "| a | b |" {
		t.Fatalf("rows without a delimiter row: %q", got)
	}
}

// A link's address is printed as text: no OSC 8 sequence is built from
// it, and what Inert made visible stays visible.
func TestMarkdownHostileLink(t *testing.T) {
	evil := Inert("[click](https://x.test/\x1b]8;;evil\x07) and <https://y.test/\x1b[2J>")
	out := strings.Join(mdLines(evil), "\n")
	if strings.Contains(out, "\x1b]") || strings.Contains(out, "\x07") || strings.Contains(out, "\x1b[2J") {
		t.Fatalf("a sequence from the reply reached the output: %q", out)
	}
	for i := 0; i < len(out); i++ {
		if out[i] == 0x1b && !(i+1 < len(out) && out[i+1] == '[') {
			t.Fatalf("an escape that is not SGR: %q", out)
		}
	}
	if !strings.Contains(stripSGR(out), "^[]8;;evil^G") {
		t.Fatalf("the address is not shown visibly: %q", out)
	}
}

func TestWrapLineWordsAndHang(t *testing.T) {
	line := "  │ Implement step 2 of the plan: each greeting gets a test and nothing else changes"
	rows := WrapLine(line, 10, 50)
	for i, r := range rows {
		if Width(r) > 40 {
			t.Errorf("row %d is %d columns: %q", i, Width(r), r)
		}
		if i > 0 && !strings.HasPrefix(r, "  │ ") {
			t.Errorf("row %d lost the box: %q", i, r)
		}
	}
	joined := strings.Join(rows, "\n")
	for _, w := range strings.Fields(line) {
		if w != "│" && !strings.Contains(joined, w) {
			t.Errorf("word %q broken or lost:\n%s", w, joined)
		}
	}
	if got := WrapLine("  argv:    claude -p --output-format stream-json --verbose", 0, 30); len(got) < 2 || !strings.HasPrefix(got[1], "           ") {
		t.Fatalf("a label's value does not continue under itself: %q", got)
	}
	// SGR attributes open at a break are closed and reopened.
	bold := "\x1b[1m" + strings.Repeat("word ", 20) + "\x1b[0m"
	for _, r := range WrapLine(bold, 0, 30)[1:] {
		if !strings.HasPrefix(r, "\x1b[1m") {
			t.Fatalf("continuation row lost the bold: %q", r)
		}
	}
	// A word wider than a row is cut, never lost.
	long := strings.Repeat("x", 100)
	if got := strings.Join(WrapLine(long, 0, 30), ""); got != long {
		t.Fatalf("long word: %q", got)
	}
}

// Through the terminal renderer: every line of a rendered reply starts
// with the speaker's gutter, the rows it wraps to continue under a
// hanging indent as wide (never a repeated gutter), and without colour
// the reply is raw.
func TestTerminalMarkdownGutter(t *testing.T) {
	reply := "## Plan\n- " + strings.Repeat("long words here ", 8) + "\n| a | b |\n|---|---|\n| 1 | 2 |"
	var b bytes.Buffer
	tr := NewTerminal(&b, true)
	tr.SetMarkdown(true)
	tr.SetWidth(func() int { return 60 })
	tr.Activity(events.RoleClaude, events.Activity{Kind: events.ActText, Text: reply[:20]})
	tr.Activity(events.RoleClaude, events.Activity{Kind: events.ActText, Text: reply[20:]})
	tr.EndLine()
	out := stripSGR(b.String())
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if !(strings.HasPrefix(l, "[claude] ") || strings.HasPrefix(l, "           ")) || Width(l) > 60 {
			t.Fatalf("row without gutter or indent, or too wide (%d): %q\n%s", Width(l), l, out)
		}
	}
	if n := strings.Count(out, "[claude] • long"); n != 1 || !strings.Contains(out, "\n           long words") {
		t.Fatalf("the wrapped item does not continue under its indent:\n%s", out)
	}
	if !strings.Contains(out, "[claude] Plan\n") || !strings.Contains(out, "[claude] a │ b") || strings.Contains(out, "##") {
		t.Fatalf("not rendered:\n%s", out)
	}
	b.Reset()
	raw := NewTerminal(&b, false)
	raw.SetMarkdown(true)
	raw.Activity(events.RoleClaude, events.Activity{Kind: events.ActText, Text: reply})
	raw.EndLine()
	if !strings.Contains(b.String(), "[claude] ## Plan\n") || !strings.Contains(b.String(), "[claude] |---|---|") {
		t.Fatalf("without colour the reply is not raw:\n%s", b.String())
	}
}
