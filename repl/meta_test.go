package repl

import (
	"encoding/json"

	"github.com/relay-baton/relay-baton/events"
)

// metaMap decodes an event's meta as a generic JSON object (numbers as
// float64), for tests that check what the log holds key by key.
func metaMap(m events.MetaJSON) map[string]any {
	var out map[string]any
	_ = json.Unmarshal(m, &out)
	return out
}
