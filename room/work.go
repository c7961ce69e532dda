package room

import (
	"context"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/room/worktrack"
	"github.com/relay-baton/relay-baton/runs"
)

// The executor's runs and the way back are package worktrack's (the
// engine's e.wt): the engine asks it where a run works and tells it when
// a run starts and ends; /diff, /apply, /undo and /runs are its. This file
// is what the engine hands it (a diff shown on the engine's screen) and
// what the one-shot commands call.

// RunInfo is one kept run, for runs / /runs (--json).
type RunInfo = worktrack.RunInfo

// RunsOf lists the runs kept for root with their change sizes.
func RunsOf(ctx context.Context, root string) ([]RunInfo, error) { return worktrack.RunsOf(ctx, root) }

// RunsText renders runs, one a line, the room's own marked.
func RunsText(list []RunInfo, now time.Time, mine *runs.Run) string {
	return worktrack.RunsText(list, now, mine)
}

// ColorDiff makes a diff inert and colours it, for the one-shot diff
// command.
func ColorDiff(diff string, useColor bool) string { return worktrack.ColorDiff(diff, useColor) }

// FindRun is the kept run id of the room's repository ("" the newest
// pending one, else the newest applied one).
func (e *Engine) FindRun(id string) (*runs.Run, error) { return e.wt.FindRun(id) }

// ApplyRun previews applying r, asks (unless --yes) and applies it; it
// returns the plan (nil when nothing could be read).
func (e *Engine) ApplyRun(ctx context.Context, r *runs.Run) (*runs.Plan, error) {
	return e.wt.ApplyRun(ctx, r)
}

// UndoRun previews undoing r (a pending run: discard it; an applied one:
// take out what the apply wrote), asks and does it.
func (e *Engine) UndoRun(ctx context.Context, r *runs.Run) error { return e.wt.UndoRun(ctx, r) }

// KeptRunsLine names the pending runs an earlier room left, for a room
// that does not resume: "" when there is none.
func (e *Engine) KeptRunsLine() string { return e.wt.KeptRunsLine() }

// diffScreen is a Terminal that shows a diff apart from the rest of what
// the room prints (the page colours its lines); it is handed the diff
// made inert.
type diffScreen interface {
	ShowDiff(diff string)
}

// pagerTerminal is a Terminal that can show a long text in a pager.
type pagerTerminal interface {
	// Page shows text in the pager; false when it did not (no terminal,
	// the text fits, no pager) and the caller prints it.
	Page(text string) bool
}

// showDiff shows a diff /diff read (cut: the note of a diff cut short):
// apart on a diffScreen, else coloured, paged when the terminal can and
// it is taller than the screen.
func (pv *previews) showDiff(diff, cut string) {
	if d, ok := pv.term.(diffScreen); ok {
		d.ShowDiff(render.Inert(diff) + cut)
		return
	}
	text := worktrack.ColorDiff(diff, pv.out.color) + cut
	if p, ok := pv.term.(pagerTerminal); ok && p.Page(text) {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	pv.out.raw(text)
}
