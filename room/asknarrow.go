package room

import (
	"strings"

	"github.com/relay-baton/relay-baton/events/render"
)

// askLine is the line a confirmation asks on: the question and its keys'
// hint on one line when they fit the terminal's width, else the hint is
// printed above (wrapped like any notice) and the question alone is the
// prompt. A prompt wider than the terminal would be drawn twice by the
// line editor, once per redraw, cut where the terminal wrapped it.
func (pv *previews) askLine(question, hint string) string {
	width := 0
	pv.out.mu.Lock()
	if pv.out.width != nil {
		width = pv.out.width()
	}
	pv.out.mu.Unlock()
	// The answer typed after it and the cursor need two more columns.
	if width <= 0 || render.Width(question+hint)+2 < width {
		return question + hint
	}
	pv.out.raw(pv.out.dim(strings.TrimSpace(hint)) + "\n")
	return question
}
