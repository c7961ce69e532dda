package repl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/panel"
)

// readline erases to the end of the screen (ESC [ J) whenever it redraws
// its line, which takes the pinned panel's rows with it. When the prompt is
// printed after the panel was drawn (the facts were ready first: a loaded
// machine), the one terminal writer repaints the panel right after the
// erase, cursor saved and restored; once unpinned, it repaints nothing.
func TestPinnedPanelRepaintedAfterAnErase(t *testing.T) {
	var out bytes.Buffer
	tw := &termWriter{w: &out}
	pp := &pinnedPanel{w: tw, size: func() (int, int, bool) { return 120, 30, true }}
	tw.pin = pp // as the REPL links them
	if !pp.Draw(panel.Facts{Active: "claude", Mode: "agents"}) {
		t.Fatal("a 120x30 terminal got no pinned panel")
	}
	drawn := out.String()
	if !strings.Contains(drawn, "┌─ context") {
		t.Fatalf("draw %q", drawn)
	}
	out.Reset()
	tw.Write([]byte("\r\x1b[Jclaude› ")) // readline's refresh of its prompt
	got := out.String()
	after, ok := strings.CutPrefix(got, "\r\x1b[Jclaude› ")
	if !ok || !strings.HasPrefix(after, "\x1b7") || !strings.HasSuffix(after, "\x1b8") || !strings.Contains(after, "┌─ context") || strings.Contains(after, "\x1b[J") {
		t.Fatalf("after the erase: %q", got)
	}
	out.Reset()
	tw.Write([]byte("plain output\n")) // no erase: nothing more
	if out.String() != "plain output\n" {
		t.Fatalf("a write without an erase was followed by %q", out.String())
	}
	pp.Close()
	out.Reset()
	tw.Write([]byte("\x1b[Jclaude› "))
	if out.String() != "\x1b[Jclaude› " {
		t.Fatalf("unpinned, an erase was followed by %q", out.String())
	}
}
