package room

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The short preview of /plan shows the task the user typed (it sits after
// the planner's instructions, past the first lines), then how many lines
// it leaves out.
func TestShortPreviewShowsTheTask(t *testing.T) {
	h := newHarness(t, "n")
	err := h.e.Plan(context.Background(), "add a --verbose flag", false)
	if !errors.Is(err, ErrDeclined) {
		t.Fatalf("err %v", err)
	}
	out := h.out.String()
	rows := strings.Split(out, "\n")
	task := -1
	for i, r := range rows {
		if strings.HasSuffix(r, "│ add a --verbose flag") {
			task = i
		}
	}
	if task < 1 || !strings.HasSuffix(rows[task-1], "│ Task:") {
		t.Fatalf("the task is not under Task: in the short preview:\n%s", out)
	}
	if !strings.Contains(rows[task+1], "│ … ") || !strings.Contains(rows[task+1], "more line") {
		t.Fatalf("no elided count after the task:\n%s", out)
	}
}

func TestPreviewSpans(t *testing.T) {
	lines := strings.Split("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl", "\n")
	for _, c := range []struct {
		task string
		want string
	}{
		{"", "[[0 2] [10 12]]"},
		{"b", "[[0 2] [10 12]]"}, // in the head already
		{"e\nf", "[[0 2] [4 6] [10 12]]"},
		{"k", "[[0 2] [10 12]]"},  // in the tail
		{"zz", "[[0 2] [10 12]]"}, // not in the prompt
	} {
		if got := fmt.Sprint(previewSpans(lines, 2, 2, c.task)); got != c.want {
			t.Errorf("task %q: %s, want %s", c.task, got, c.want)
		}
	}
}

func TestPreviewParagraphs(t *testing.T) {
	// Each case: the prompt's lines, then the rows the short preview shows.
	kept := []string{"", "Question:", "what now", "## Steps", "give a list", "```go", "package main", "import x", "```"}
	in := append(append([]string{
		"This is a read-only turn: do not change any file and do not run commands that modify the",
		"repository.",
	}, kept...), "- item one", "continued", "line one", "line two")
	want := append(append([]string{
		"This is a read-only turn: do not change any file and do not run commands that modify the repository.",
	}, kept...), "- item one continued", "line one", "line two")
	// The last two lines are the user's own: never joined.
	if got := paragraphs(in, 0, [2]int{len(in) - 2, 2}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}
