package room

import "strings"

// previewSpans are the ranges of a prompt's lines a short preview shows:
// its first head lines, the lines of the user's task when they fall
// between those and the last tail lines (a plan's task sits after the
// planner's instructions), and its last tail lines. The spans are in
// order and do not overlap.
func previewSpans(lines []string, head, tail int, task string) [][2]int {
	spans := [][2]int{{0, head}}
	if i, k := findTask(lines, task); i >= 0 && i+k > head && i < len(lines)-tail {
		start := max(i, head)
		spans = append(spans, [2]int{start, min(start+min(k, previewShortLines), len(lines)-tail)})
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
