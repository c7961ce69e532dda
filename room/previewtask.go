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
