// Package replaycmd holds `relay-baton replay`: its row of the command
// table, its flags and its Run (the timeline itself is package replay's).
package replaycmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/relay-baton/relay-baton/replay"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// Replay is its command's row of the table (usage, help) and its Run.
var Replay = &cli.Command{
	Entry: cli.Entry{Name: "replay", Usage: "[--json] [--session ID] [--kind k1,k2] [--role r1,r2] [--since DURATION|TIMESTAMP] [--limit N] [--follow] [--file PATH] [--path DIR]", Short: "Show the recorded conversation timeline (read-only)"},
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

func runReplay(inv *cli.Invocation) error {
	fs := inv.Flags()
	var o replay.Options
	resolve := replay.AddFlags(fs, &o)
	path := fs.String("path", "", "repository root (default: the git root of the current folder)")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("replay takes no arguments (got %q)", fs.Arg(0)), Hint: "relay-baton replay --help"}
	}
	if err := resolve(); err != nil {
		return &cli.UsageError{Msg: err.Error(), Hint: "relay-baton replay --help"}
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
		root, err := workspace.FindRoot(start)
		if err != nil {
			if errors.Is(err, workspace.ErrNotGitRepo) {
				abs, _ := filepath.Abs(start)
				return &cli.UsageError{Msg: fmt.Sprintf("%s: %v (run `git init` there, pass --path to a repository, or --file to a conversation.jsonl)", abs, workspace.ErrNotGitRepo), Hint: "relay-baton replay --file PATH"}
			}
			return &cli.UsageError{Msg: fmt.Sprintf("--path %s: %v", start, err)}
		}
		o.File = workspace.LogPath(root)
		if err := safeio.NoLinkBelow(root, o.File); err != nil {
			return fmt.Errorf("%w (or pass --file PATH to read a log elsewhere on purpose)", err)
		}
	}
	err := replay.Run(inv.Ctx, inv.IO.Out, o)
	if err != nil && !explicit && !o.Follow && errors.Is(err, events.ErrNoLog) {
		// A repository where nothing was recorded yet: an empty timeline.
		o.File = os.DevNull
		return replay.Run(inv.Ctx, inv.IO.Out, o)
	}
	return err
}
