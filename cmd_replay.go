package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room"
)

var replayCommand = &command{
	Name:  "replay",
	Usage: "[--json] [--session ID] [--kind k1,k2] [--role r1,r2] [--since DURATION|TIMESTAMP] [--limit N] [--follow] [--file PATH] [--path DIR]",
	Short: "Show the recorded conversation timeline (read-only)",
	Long: `Prints .ai-session/conversation.jsonl of the repository as a numbered
timeline, "N. [ts] who kind: text", then a summary footer. Filters combine:
--session, --kind and --role take comma-separated lists; --since takes a
duration back from now (90m, 2h, 3d) or an RFC 3339 time. --limit N keeps
only the newest N events (numbered from 1). --json prints {entries, summary}.
--follow keeps printing events as they are appended, until Ctrl-C.

Lines that are not valid events (a torn last line after a crash, bad JSON,
a line over 1 MiB) are skipped and reported after the footer. replay never
writes: it does not create .ai-session.`,
	Run: runReplay,
}

func runReplay(inv *invocation) error {
	fs := inv.flags()
	var o room.ReplayOptions
	resolve := room.AddReplayFlags(fs, &o)
	path := fs.String("path", "", "repository root (default: the git root of the current folder)")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("replay takes no arguments (got %q)", fs.Arg(0)), hint: "relay-baton replay --help"}
	}
	if err := resolve(); err != nil {
		return &usageError{msg: err.Error(), hint: "relay-baton replay --help"}
	}
	o.Color = inv.IO.Color
	explicit := o.File != ""
	if !explicit {
		start := *path
		if start == "" {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			start = wd
		}
		root, err := conversation.FindRoot(start)
		if err != nil {
			if errors.Is(err, conversation.ErrNotGitRepo) {
				abs, _ := filepath.Abs(start)
				return &usageError{msg: fmt.Sprintf("%s: %v (run `git init` there, pass --path to a repository, or --file to a conversation.jsonl)", abs, conversation.ErrNotGitRepo), hint: "relay-baton replay --file PATH"}
			}
			return &usageError{msg: fmt.Sprintf("--path %s: %v", start, err)}
		}
		o.File = conversation.LogPath(root)
	}
	err := room.Replay(inv.Ctx, inv.IO.Out, o)
	if err != nil && !explicit && !o.Follow && errors.Is(err, events.ErrNoLog) {
		// A repository where nothing was recorded yet: an empty timeline.
		o.File = os.DevNull
		return room.Replay(inv.Ctx, inv.IO.Out, o)
	}
	return err
}
