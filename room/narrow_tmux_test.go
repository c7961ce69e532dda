package room

import (
	"fmt"
	"strings"
	"testing"
)

// At 60 columns (no pinned panel) the one-line status is printed before
// each prompt; it must never land after the prompt and hide it until a key
// is typed. readline prints its prompt before it starts reading, and a
// status written in between was written after the prompt, the prompt not
// redrawn. Many prompts in a row, in a real terminal emulator.
func TestTmuxNarrowStatusNeverHidesThePrompt(t *testing.T) {
	dir := newRepo(t)
	_, fake := binaries(t)
	r := startTmuxRoom(t, dir, 60, 30, []string{"chat"}, "RELAY_BATON_CLAUDE="+fake, "RELAY_BATON_CODEX="+fake)
	lastLine := func(screen string) string {
		lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
		return strings.TrimRight(lines[len(lines)-1], " ")
	}
	r.settle("the first prompt under its status", 0, func(all, screen string) bool {
		return strings.Contains(all, "ctx claude") && lastLine(screen) == "claude›"
	})
	const n = 60
	for i := range n {
		r.line(fmt.Sprintf("/note n%02d", i))
		r.wait(fmt.Sprintf("/note n%02d", i), 1, 0)
		r.settle(fmt.Sprintf("prompt %d under its status", i+2), 0, func(all, screen string) bool {
			return strings.Count(all, "ctx claude") >= i+2 && lastLine(screen) == "claude›"
		})
		if all := r.all(); strings.Contains(all, "claude› ctx claude") {
			t.Fatalf("the status line was drawn after the prompt:\n%s", all)
		}
	}
}
