package workspace

import (
	"sort"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/safeio"
)

// LogSessions lists the session ids of the conversation log of the
// repository holding dir, newest first (what replay's --session completes
// to). A log that cannot be read (or is not a regular file) has none.
func LogSessions(dir string) []string {
	root, err := FindRoot(dir)
	if err != nil {
		return nil
	}
	f, err := safeio.OpenRegular(LogPath(root))
	if err != nil {
		return nil
	}
	defer f.Close()
	last := map[string]int{}
	n := 0
	_, _ = events.Scan(f, func(e events.Event) error {
		n++
		if e.SessionID != "" {
			last[e.SessionID] = n
		}
		return nil
	})
	ids := make([]string, 0, len(last))
	for id := range last {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return last[ids[i]] > last[ids[j]] })
	return ids
}
