package preview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events/render"
)

// InlineMax is the largest prompt stored inside a prompt_preview
// event; longer ones go to .ai-session/prompts/ and the event refers to it.
const InlineMax = 4000

// previewPromptMax is the largest prompt printed in full in a preview.
const previewPromptMax = 1500

// QuoteArg quotes an argv element for display only (nothing is run
// through a shell).
func QuoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return strconv.Quote(s)
}

// ArgvSummary is argv with the prompt replaced by its size.
func ArgvSummary(argv []string, prompt string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == prompt && prompt != "" {
			parts[i] = fmt.Sprintf("<prompt, %d chars>", len([]rune(prompt)))
			continue
		}
		parts[i] = QuoteArg(a)
	}
	return strings.Join(parts, " ")
}

// ShortLines is how many lines of the prompt a short preview
// shows: its first and its last half of them (an ask's question is at its
// end); a prompt up to ShortLines+2 lines is shown whole.
const ShortLines = 8

// previewAllLines caps the lines the whole view prints (e reads the rest
// in the editor).
const previewAllLines = 400

// PromptLines writes a preview's prompt (or message): its size, then its
// first and last lines (ShortLines in all) with the lines of task
// (what the user typed) between, or every line (up to previewAllLines)
// when all is set or when it is that short anyway.
func PromptLines(b *strings.Builder, noun, prompt, task string, n int, all bool) {
	lines := strings.Split(strings.TrimRight(prompt, "\n"), "\n")
	head, tail := len(lines), 0
	switch {
	case all:
		head = min(head, previewAllLines)
		fmt.Fprintf(b, "  %s (%d chars, %s):\n", noun, n, render.Count(len(lines), "line"))
	case len(lines) <= ShortLines+2 && n <= previewPromptMax:
		fmt.Fprintf(b, "  %s (%d chars):\n", noun, n)
	default:
		head, tail = ShortLines/2, ShortLines/2
		if len(lines) <= ShortLines+2 { // few but long lines
			head, tail = len(lines), 0
		}
		fmt.Fprintf(b, "  %s (%d chars, %s; v shows all, e edits):\n", noun, n, render.Count(len(lines), "line"))
	}
	at := 0
	for _, s := range previewSpans(lines, head, tail, task) {
		if skipped := s[0] - at; skipped > 0 {
			fmt.Fprintf(b, "  │ … %s …\n", render.Count(skipped, "more line"))
		}
		rows := lines[max(s[0], at):s[1]]
		if !all {
			ti, tk := findTask(lines, task)
			rows = paragraphs(rows, max(s[0], at), [2]int{ti, tk})
		}
		for _, l := range rows {
			fmt.Fprintf(b, "  │ %s\n", previewLine(l))
		}
		at = max(at, s[1])
	}
}

// ConfigLine is the preview's line about the extra arguments: every
// argument a trusted .relay-baton.json adds (or why one present is
// ignored) and every one the user's own config adds, each with where it
// comes from; "" when there is neither.
func ConfigLine(inv agents.Invocation) string {
	quoted := func(args []string) string {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = QuoteArg(a)
		}
		return strings.Join(parts, " ")
	}
	var lines []string
	switch {
	case inv.ConfigIgnored != "":
		lines = append(lines, inv.ConfigIgnored)
	case inv.Config == "":
	case len(inv.Extra) == 0:
		lines = append(lines, agents.ConfigName+" (trusted) adds no argument")
	default:
		lines = append(lines, fmt.Sprintf("%s (trusted) adds %d argument(s): %s", agents.ConfigName, len(inv.Extra), quoted(inv.Extra)))
	}
	if len(inv.UserExtra) > 0 {
		lines = append(lines, fmt.Sprintf("your config %s adds %d argument(s): %s", inv.UserConfig, len(inv.UserExtra), quoted(inv.UserExtra)))
	}
	return strings.Join(lines, "\n           ") // under "  config:  "
}

// previewLineMax is the longest prompt line a preview prints whole.
const previewLineMax = 400

// previewLine cuts a long prompt line for the preview (answer e to read it
// all).
func previewLine(l string) string {
	if len(l) <= previewLineMax {
		return l
	}
	r := []rune(l)
	if len(r) <= previewLineMax {
		return l
	}
	return string(r[:previewLineMax]) + fmt.Sprintf("… (+%d chars)", len(r)-previewLineMax)
}

// previewSpans are the ranges of a prompt's lines a short preview shows:
// its first head lines, the lines of the user's task when they fall
// between those and the last tail lines (a plan's task sits after the
// planner's instructions), and its last tail lines. The spans are in
// order and do not overlap.
func previewSpans(lines []string, head, tail int, task string) [][2]int {
	spans := [][2]int{{0, head}}
	if i, k := findTask(lines, task); i >= 0 && i+k > head && i < len(lines)-tail {
		start := max(i, head)
		spans = append(spans, [2]int{start, min(start+min(k, ShortLines), len(lines)-tail)})
	}
	return append(spans, [2]int{len(lines) - tail, len(lines)})
}

// findTask is the index of the line the task starts on in lines and the
// task's number of lines; -1 when task is empty or not found.
func findTask(lines []string, task string) (int, int) {
	task = strings.TrimSpace(task)
	if task == "" {
		return -1, 0
	}
	first, _, _ := strings.Cut(task, "\n")
	first = strings.TrimSpace(first)
	for i, l := range lines {
		if strings.TrimSpace(l) == first {
			return i, strings.Count(task, "\n") + 1
		}
	}
	return -1, 0
}

// paragraphs joins the lines of a prompt that continue a sentence (a line
// starting with a lower-case letter after one that ends with a
// lower-case letter or a comma) into one row, outside code fences and
// never in the user's own text (lines first+i in task, as findTask gives
// it), so that the terminal wraps the paragraph, not each line of it: a
// row left holding a line's last two words, then the next line, reads as
// two messages. The whole view (v) keeps every line as it is.
func paragraphs(lines []string, first int, task [2]int) []string {
	var out []string
	fence, joined := false, false
	inTask := func(i int) bool { return first+i >= task[0] && first+i < task[0]+task[1] }
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
		}
		if n := len(out); n > 0 && !fence && !inTask(i) && !inTask(i-1) && continues(out[n-1], l) {
			out[n-1] += " " + l
			joined = true
			continue
		}
		out = append(out, l)
	}
	if !joined {
		return lines
	}
	return out
}

// continues reports whether next goes on the sentence prev ends.
func continues(prev, next string) bool {
	p := strings.TrimRight(prev, " ")
	if p == "" || next == "" || !('a' <= next[0] && next[0] <= 'z') || strings.HasPrefix(strings.TrimSpace(p), "#") {
		return false
	}
	last := p[len(p)-1]
	return 'a' <= last && last <= 'z' || last == ','
}
