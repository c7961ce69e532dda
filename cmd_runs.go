package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/runs"
)

// runRuns lists the runs kept for the repository: `relay-baton runs`.
func runRuns(inv *cli.Invocation) error {
	noDiet := func(fs *pflag.FlagSet) { _ = fs.MarkHidden("diet") } // a list of runs: no prompt to shape
	return reportCommand(inv, "runs", false, noDiet, func(e *room.Engine, _ *roomFlags) (any, string, error) {
		list, err := room.RunsOf(inv.Ctx, e.Root)
		if err != nil {
			return nil, "", err
		}
		if list == nil {
			list = []room.RunInfo{}
		}
		text := room.RunsText(list, time.Now(), nil)
		if len(list) == 0 {
			text = "no runs kept for this repository (an executor run's worktree is listed here until it is applied or discarded)\n"
		}
		return list, text, nil
	})
}

// diffJSON is `relay-baton diff --json`.
type diffJSON struct {
	Run      string   `json:"run"`
	State    string   `json:"state"`
	Worktree string   `json:"worktree,omitempty"`
	Files    []string `json:"files"`
	Diff     string   `json:"diff"`
}

// runDiff prints a run's change: `relay-baton diff`.
func runDiff(inv *cli.Invocation) error {
	var id string
	var f roomFlags
	f.readOnly = true
	fs := inv.Flags()
	f.define(fs, false, true)
	fs.StringVar(&id, "run", "", "the run `ID` (relay-baton runs lists them; default: the newest pending one)")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	e, err := openEngine(inv, &f, false)
	if err != nil {
		return err
	}
	defer e.Close()
	r, err := e.FindRun(id)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	diff, err := r.Diff(inv.Ctx, fs.Args()...)
	if err != nil {
		return err
	}
	if f.js {
		ch, _, _ := r.Changes(inv.Ctx)
		out := diffJSON{Run: r.ID, State: r.State, Files: []string{}, Diff: diff}
		if r.State == runs.Pending {
			out.Worktree = r.Worktree
		}
		for _, c := range ch {
			out.Files = append(out.Files, c.Path)
		}
		return inv.PrintJSON(out)
	}
	if strings.TrimSpace(diff) == "" {
		fmt.Fprintf(inv.IO.Out, "no changes in run %s\n", r.ID)
		return nil
	}
	_, err = inv.IO.Out.Write([]byte(room.ColorDiff(diff, inv.IO.Color)))
	return err
}

// runApply and runUndo are the room's /apply and /undo outside it.
func runApply(inv *cli.Invocation) error {
	return runCommand(inv, "apply", func(e *room.Engine, r *runs.Run) error {
		if r.State != runs.Pending {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("run %s was applied already (relay-baton undo --run %s takes it out)", r.ID, r.ID)}
		}
		plan, err := e.ApplyRun(inv.Ctx, r)
		if err == nil && plan != nil && plan.Conflicts > 0 {
			return &cli.ExitError{Code: 1}
		}
		return err
	})
}

func runUndo(inv *cli.Invocation) error {
	return runCommand(inv, "undo", func(e *room.Engine, r *runs.Run) error { return e.UndoRun(inv.Ctx, r) })
}

// runCommand opens the room for apply or undo of a kept run (--run ID,
// default the newest pending one), asking on the terminal unless --yes.
func runCommand(inv *cli.Invocation, name string, fn func(*room.Engine, *runs.Run) error) error {
	var id string
	var f roomFlags
	fs := inv.Flags()
	fs.StringVar(&f.path, "path", ".", "a directory inside the git repository")
	fs.BoolVarP(&f.yes, "yes", "y", false, "confirm the preview without asking (required when stdin is not a terminal)")
	fs.StringVar(&id, "run", "", "the run `ID` (relay-baton runs lists them; default: the newest pending one)")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s takes no arguments, got %q (the run is --run ID)", name, strings.Join(fs.Args(), " "))
	}
	e, err := openToRun(inv, inv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	r, err := e.FindRun(id)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	if err := roomErr(fn(e, r)); err != nil {
		return err
	}
	return unrecorded(e)
}
