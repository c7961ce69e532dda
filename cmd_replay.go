package main

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
