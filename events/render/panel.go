package render

import (
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// Panel renders one activity for the web panel's event stream: the SSE
// event name and its JSON data (every string through Inert, so no control
// character reaches the page; the server encodes the data with
// encoding/json, whose HTML escaping turns <, > and & into \u003c, \u003e,
// \u0026, and the page inserts text with textContent only). ok is false for
// kinds the panel does not show. now stamps an activity without a time.
func Panel(a events.Activity, now time.Time) (name string, data map[string]any, ok bool) {
	at := a.Time
	if at.IsZero() {
		at = now.UTC()
	}
	switch a.Kind {
	case events.ActThinking:
		return "thinking", map[string]any{"at": at}, true
	case events.ActTool:
		return "activity", map[string]any{"tool": InertLine(a.Tool), "detail": InertLine(a.Detail), "at": at}, true
	case events.ActText:
		if strings.TrimSpace(a.Text) == "" {
			return "", nil, false
		}
		return "text", map[string]any{"text": Inert(a.Text), "at": at}, true
	case events.ActDone:
		return "end_turn", map[string]any{"at": at}, true
	case events.ActError:
		return "notice", map[string]any{"text": Inert(a.Text), "at": at}, true
	}
	return "", nil, false
}

// PanelNotice is the data of a panel "notice" event.
func PanelNotice(text string, now time.Time) map[string]any {
	return map[string]any{"text": Inert(text), "at": now.UTC()}
}
