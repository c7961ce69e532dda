package room

// Temporary stand-ins for room/replay.go, which another engineer writes.
// The lead deletes this file at merge; the signatures match that file's.

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/spf13/pflag"
)

// ReplayOptions selects and formats events for Replay.
type ReplayOptions struct {
	File                   string
	JSON                   bool
	Sessions, Kinds, Roles []string
	Since                  time.Time
	Limit                  int
	Follow                 bool
	Color                  bool
	Now                    func() time.Time
}

// AddReplayFlags defines the replay filters on fs; the returned func
// validates them after parsing.
func AddReplayFlags(fs *pflag.FlagSet, o *ReplayOptions) func() error {
	fs.StringSliceVar(&o.Kinds, "kind", nil, "only these kinds")
	fs.StringSliceVar(&o.Roles, "role", nil, "only these roles")
	fs.StringSliceVar(&o.Sessions, "session", nil, "only these sessions")
	fs.IntVar(&o.Limit, "limit", 0, "newest N events")
	return func() error {
		if o.Limit < 0 {
			return fmt.Errorf("--limit must be >= 0")
		}
		return nil
	}
}

// Replay prints the events of o.File selected by o.
func Replay(ctx context.Context, w io.Writer, o ReplayOptions) error {
	f, err := os.Open(o.File)
	if err != nil {
		if os.IsNotExist(err) {
			fmt.Fprintln(w, "no conversation events. (nothing recorded yet)")
			return nil
		}
		return err
	}
	defer f.Close()
	var list []events.Event
	_, err = events.Scan(f, func(e events.Event) error {
		if len(o.Kinds) > 0 && !slices.Contains(o.Kinds, string(e.Kind)) {
			return nil
		}
		if len(o.Roles) > 0 && !slices.Contains(o.Roles, string(e.Role)) {
			return nil
		}
		if len(o.Sessions) > 0 && !slices.Contains(o.Sessions, e.SessionID) {
			return nil
		}
		list = append(list, e)
		return nil
	})
	if err != nil {
		return err
	}
	if o.Limit > 0 && len(list) > o.Limit {
		list = list[len(list)-o.Limit:]
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "no conversation events. (nothing recorded yet)")
		return nil
	}
	for i, e := range list {
		fmt.Fprintln(w, FormatEvent(i+1, e, o.Color))
	}
	return nil
}

// FormatEvent renders one event as "N. [ts] who kind: text".
func FormatEvent(n int, e events.Event, color bool) string {
	who := string(e.Role)
	if a, ok := e.Meta["agent"].(string); ok && a != "" && a != who {
		who += "/" + a
	}
	return fmt.Sprintf("%d. [%s] %s %s: %s", n, e.TS, who, e.Kind, e.Text)
}
