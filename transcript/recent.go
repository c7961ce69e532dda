package transcript

import (
	"context"

	"github.com/relay-baton/relay-baton/events"
)

// RecentTurns is how many turns `tail --no-follow` shows without
// --from-start: the session's latest ones, the turn in progress included.
const RecentTurns = 3

// TailRecent reads the transcript at path to its end and hands show the
// activities of its last n turns (a turn ends with ActDone; the end-of-turn
// lines that follow one stay with it), then those of a turn not yet ended,
// in order. onSkip hears about skipped lines, as with Tail.
func TailRecent(ctx context.Context, path string, n int, onSkip func(int64, string), show func([]events.Activity)) error {
	var turns [][]events.Activity
	var cur []events.Activity
	err := Tail(ctx, TailOptions{Path: path, OnSkip: onSkip, OnActivity: func(_ int64, acts []events.Activity) bool {
		for _, a := range acts {
			cur = append(cur, a)
			if a.Kind != events.ActDone {
				continue
			}
			if onlyDone(cur) && len(turns) > 0 {
				turns[len(turns)-1] = append(turns[len(turns)-1], cur...)
			} else {
				turns = append(turns, cur)
			}
			cur = nil
			if len(turns) > n {
				turns = append(turns[:0:0], turns[len(turns)-n:]...)
			}
		}
		return true
	}})
	for _, t := range append(turns, cur) {
		if len(t) > 0 {
			show(t)
		}
	}
	return err
}

// onlyDone reports whether acts are end-of-turn lines only.
func onlyDone(acts []events.Activity) bool {
	for _, a := range acts {
		if a.Kind != events.ActDone {
			return false
		}
	}
	return true
}
