package room

import (
	"context"
	"errors"
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
