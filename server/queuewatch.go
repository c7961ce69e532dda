package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/safeio"
)

// queueUpdate is one change of a session's queue: its depth (delivered
// nil), or a message a lane delivered.
type queueUpdate struct {
	depth     int
	delivered *conversation.Message
}

// watchQueueOf calls fn with the inbox's depth of s each time it changes
// (first at once) and with each message delivered after it called started
// (read from
// delivered/ once its claimer recorded deliveredAt), until ctx ends. fn is
// not called concurrently. It is the one reader of delivered/ besides
// conversation's State.
func watchQueueOf(ctx context.Context, s *conversation.Session, started func(), fn func(queueUpdate)) error {
	seen := map[string]bool{}
	for _, n := range listJSON(s.DeliveredDir()) {
		seen[n] = true
	}
	started() // what is delivered from now on is reported
	lastDepth := -1
	var wake <-chan fsnotify.Event
	if fw, err := fsnotify.NewWatcher(); err == nil {
		defer closeWatcher(fw)
		_ = fw.Add(s.InboxDir())
		_ = fw.Add(s.DeliveredDir())
		wake = fw.Events
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if q, err := s.Queue(); err == nil && q.Depth != lastDepth {
			lastDepth = q.Depth
			fn(queueUpdate{depth: q.Depth})
		}
		for _, n := range listJSON(s.DeliveredDir()) {
			if seen[n] {
				continue
			}
			seen[n] = true
			var m conversation.Message
			b, err := safeio.ReadOwned(filepath.Join(s.DeliveredDir(), n), maxDeliveredFile)
			if err != nil || json.Unmarshal(b, &m) != nil || m.DeliveredAt == nil {
				delete(seen, n) // not complete yet: the claimer rewrites it with deliveredAt
				continue
			}
			fn(queueUpdate{depth: -1, delivered: &m})
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		}
	}
}

func listJSON(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	return out
}

// maxDeliveredFile caps a delivered message read: the text plus JSON
// escaping and fields (conversation caps an inbox file the same).
const maxDeliveredFile = 8*conversation.MaxMessageBytes + 4096

// closeWatcher closes an fsnotify watcher in the background: Close waits
// for the watcher's reader to wake (about 8 ms with inotify).
func closeWatcher(w *fsnotify.Watcher) { go w.Close() }
