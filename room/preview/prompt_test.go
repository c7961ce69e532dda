package preview

import (
	"fmt"
	"strings"
	"testing"
)

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
