package render

import (
	"strings"

	"github.com/relay-baton/relay-baton/events"
)

// InlineLines is Lines with each line's inline Markdown (code spans,
// emphasis, links) rendered when the renderer renders Markdown (colour
// and SetMarkdown on); otherwise the text is shown as written, as replies
// are. The text is sanitized before it is rendered.
func (t *Terminal) InlineLines(r events.Role, text string) {
	if t.md == nil {
		t.Lines(r, text)
		return
	}
	t.EndLine()
	t.inBlock, t.thinking = false, false
	rows := strings.Split(strings.TrimRight(Inert(text), "\n"), "\n")
	for i, row := range rows {
		rows[i] = Inline(row)
	}
	t.writeRows(r, rows)
}
