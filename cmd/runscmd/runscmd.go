// Package runscmd holds the commands of the executor's runs outside the
// room: runs, diff, apply and undo, each its row of the command table, its
// flags and its Run, on the room's engine (roomcmd.OpenEngine).
package runscmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/cmd/roomcmd"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/runs"
)

// Runs is its command's row of the table (usage, help) and its Run.
var Runs = &cli.Command{Entry: cli.Entry{Name: "runs", Usage: "[--json]", Short: "List the executor runs kept for this repository: worktree, age, change size (read-only)"}, Run: runRuns}

// runRuns lists the runs kept for the repository: `relay-baton runs`.
func runRuns(inv *cli.Invocation) error {
	noDiet := func(fs *pflag.FlagSet) { _ = fs.MarkHidden("diet") } // a list of runs: no prompt to shape
	return roomcmd.Report(inv, "runs", false, noDiet, func(e *room.Engine, _ *roomcmd.Flags) (any, string, error) {
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

// Diff is its command's row of the table (usage, help) and its Run.
var Diff = &cli.Command{
	Entry: cli.Entry{Name: "diff", Usage: "[--run ID] [--json] [file...]", Short: "Show an executor run's change, not applied or as applied (read-only)"},
	Long: `The change of the newest pending run (or, with none, the newest applied one; --run ID
picks one: relay-baton runs lists them), as a unified diff against your tree when the run
started. Paths limit it to some files. --json prints {run, state, worktree, files, diff}.`,
	Run: runDiff,
}

// runDiff prints a run's change: `relay-baton diff`.
func runDiff(inv *cli.Invocation) error {
	var id string
	var f roomcmd.Flags
	f.ReadOnly = true
	fs := inv.Flags()
	f.Define(fs, false, true)
	fs.StringVar(&id, "run", "", "the run `ID` (relay-baton runs lists them; default: the newest pending one)")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	e, err := roomcmd.OpenEngine(inv, &f, false)
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
	if f.JSON {
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

// Apply is its command's row of the table (usage, help) and its Run.
var Apply = &cli.Command{
	Entry: cli.Entry{Name: "apply", Usage: "[--run ID] [--yes]", Short: "Bring a pending run's change into your tree, three-way, after a preview (all or nothing)"},
	Long: `The room's /apply outside the room. The preview lists every path the run changed with its
hunks and what apply does to it: write (your copy is what the run started from), merge (you
changed it too: both kept), create, same, kept (the run deleted it: apply never deletes a file).
A conflict anywhere applies nothing and names each path. Your index and HEAD are not touched.
Then the run's worktree is removed; undo takes out exactly what was written.`,
	Run: runApply,
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

// Undo is its command's row of the table (usage, help) and its Run.
var Undo = &cli.Command{
	Entry: cli.Entry{Name: "undo", Usage: "[--run ID] [--yes]", Short: "Discard a pending run, or take out what apply wrote, after a preview"},
	Long: `The room's /undo outside the room. A pending run is discarded: its worktree is removed
(git worktree remove and prune) and your files are not touched. An applied run has what
apply wrote taken out, three-way: edits you made since are kept, and a path where they
overlap refuses the whole undo. A file apply made is removed only while it is as apply
left it; no file that existed before the run is removed.`,
	Run: runUndo,
}

func runUndo(inv *cli.Invocation) error {
	return runCommand(inv, "undo", func(e *room.Engine, r *runs.Run) error { return e.UndoRun(inv.Ctx, r) })
}

// runCommand opens the room for apply or undo of a kept run (--run ID,
// default the newest pending one), asking on the terminal unless --yes.
func runCommand(inv *cli.Invocation, name string, fn func(*room.Engine, *runs.Run) error) error {
	var id string
	var f roomcmd.Flags
	fs := inv.Flags()
	fs.StringVar(&f.Path, "path", ".", "a directory inside the git repository")
	fs.BoolVarP(&f.Yes, "yes", "y", false, "confirm the preview without asking (required when stdin is not a terminal)")
	fs.StringVar(&id, "run", "", "the run `ID` (relay-baton runs lists them; default: the newest pending one)")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s takes no arguments, got %q (the run is --run ID)", name, strings.Join(fs.Args(), " "))
	}
	e, err := roomcmd.OpenToRun(inv, inv, &f)
	if err != nil {
		return err
	}
	defer e.Close()
	r, err := e.FindRun(id)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	if err := roomcmd.Err(fn(e, r)); err != nil {
		return err
	}
	return roomcmd.Unrecorded(e)
}
