package worktrack

// The executor in a worktree of its own (package runs): a run that may
// write starts in a git worktree outside the repository, made on the yes
// from HEAD plus the user's uncommitted and untracked files; its work
// stays there (pending) until /apply brings it into the user's tree by a
// three-way merge, all or nothing; /undo discards a pending run, or takes
// out exactly what an apply wrote. The planner and the reviewer read the
// pending run's worktree. --in-place (or "in_place" in the user's
// worktree.json) keeps the executor in the user's tree (work.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/runs"
)

// WorktreeMode reports whether executor runs get a worktree.
func (t *Tracker) WorktreeMode() bool { return !t.inPlace && t.d.Root != "" && !t.d.ReadOnly }

// InPlace reports whether the executor edits the user's tree directly.
func (t *Tracker) InPlace() bool { return t.inPlace }

// Pending is the run whose work is not applied, or nil.
func (t *Tracker) Pending() *runs.Run {
	if t.run != nil && t.run.State == runs.Pending {
		return t.run
	}
	return nil
}

// ChangedFiles is how many files an executor run left changed, for its
// summary: a pending run's whole change (not the user's uncommitted files
// the worktree started with), else the user's tree against HEAD.
func (t *Tracker) ChangedFiles(ctx context.Context) int {
	if t.Pending() != nil {
		return t.pendingFiles
	}
	ch, _ := gitrepo.Changes(ctx, t.WorkDir())
	return len(ch)
}

// WorkDir is where agents work and what the room's git facts for them
// read: the pending run's worktree, else the user's tree.
func (t *Tracker) WorkDir() string {
	if r := t.Pending(); r != nil {
		return r.Worktree
	}
	return t.d.Root
}

// RunDir is the working directory of a run of role: the pending run's
// worktree; for an executor with none, a new run's folder, reserved (made
// on the yes, removed on a no).
func (t *Tracker) RunDir(role agents.Role) string {
	if !t.WorktreeMode() {
		return t.d.Root
	}
	if r := t.Pending(); r != nil {
		return r.Worktree
	}
	if role != agents.RoleExecutor {
		return t.d.Root
	}
	if t.run != nil && t.run.Reserved() {
		return t.run.Worktree
	}
	r, err := runs.Reserve(t.d.Root)
	if err != nil {
		t.runErr = err
		return t.d.Root
	}
	t.runErr = nil
	t.keepApplied()
	t.setRun(r)
	return r.Worktree
}

// keepApplied forgets an applied run (its record stays: relay-baton
// undo --run ID takes it out) when a new run takes the room's one slot.
func (t *Tracker) keepApplied() {
	if t.run != nil && t.run.State == runs.Applied {
		t.d.Say("the applied run %s stays undoable outside the room: relay-baton undo --run %s", t.run.ID, t.run.ID)
	}
}

// Ready refuses an executor run in the user's tree when worktree
// mode could not reserve a worktree (no git, no commit): the room says
// why and how to run in place.
func (t *Tracker) Ready(req agents.Request) error {
	if !t.WorktreeMode() || req.Role != agents.RoleExecutor || req.Dir != t.d.Root || t.runErr == nil {
		return nil
	}
	return fmt.Errorf("no worktree for %s's run: %v. Nothing ran; /runs and relay-baton runs show kept runs. To let the executor edit your tree directly, add --in-place (relay-baton chat --in-place; execute, continue and handoff take it too)", req.Agent, t.runErr)
}

// CancelReserved removes a reserved run's empty folder (a declined or
// failed preview).
func (t *Tracker) CancelReserved() {
	if t.run != nil && t.run.Reserved() {
		t.run.Cancel()
		t.run = nil
	}
}

// Enter sets up the reserved worktree of req (on the yes, right before
// the run): the user's tree is recorded now.
func (t *Tracker) Enter(ctx context.Context, req agents.Request, command string) error {
	r := t.run
	if r == nil || !r.Reserved() || req.Dir != r.Worktree {
		return nil
	}
	start := time.Now()
	opts := t.opts
	opts.Agent, opts.Command = req.Agent, command
	if err := r.Setup(context.WithoutCancel(ctx), opts); err != nil {
		t.run = nil
		return err
	}
	extra := ""
	if n := len(r.Copied) + len(r.Linked); n > 0 {
		extra = fmt.Sprintf("; from your %s: %s", runs.ConfigName, strings.Join(append(append([]string{}, r.Copied...), r.Linked...), ", "))
	}
	t.d.Say("worktree %s made in %s: HEAD %s plus your uncommitted and untracked files%s; your files stay as they are until /apply",
		r.Worktree, time.Since(start).Round(time.Millisecond), short(r.Head), extra)
	return nil
}

// HoldPending takes the pending run's lock for an executor run in its
// worktree (req), for as long as it runs: another room's /apply, /undo,
// the one-shot apply, undo and discard are refused meanwhile, naming this
// room. Other runs hold nothing.
func (t *Tracker) HoldPending(req agents.Request, command string) (release func(), err error) {
	r := t.Pending()
	if r == nil || req.Role != agents.RoleExecutor || req.Dir != r.Worktree {
		return func() {}, nil
	}
	return r.Hold(runs.Holder{PID: os.Getpid(), Session: t.d.SessionID, Agent: req.Agent, Command: command, Since: t.d.Now()})
}

// Line is the preview's line about where a run works.
func (t *Tracker) Line(req agents.Request) string {
	if t.d.Root == "" || t.d.ReadOnly {
		return ""
	}
	if req.Role == agents.RoleExecutor && !t.WorktreeMode() {
		return "in place: the executor edits your working tree directly; /undo reverts only files still as the run left them, and cannot tell edits you make during the run from the agent's"
	}
	r := t.run
	switch {
	case r == nil || req.Dir != r.Worktree:
		return ""
	case r.Reserved():
		ignored := "ignored files are not copied"
		if l := append(append([]string{}, t.opts.Copy...), t.opts.Link...); len(l) > 0 {
			ignored = fmt.Sprintf("ignored files are not copied, but for %s from your %s", strings.Join(l, ", "), runs.ConfigName)
		}
		return fmt.Sprintf("worktree: %s (made on yes from HEAD plus your uncommitted and untracked files; %s; your files change only on /apply)", r.Worktree, ignored)
	case req.Role == agents.RoleExecutor:
		return fmt.Sprintf("worktree: %s (the pending run's: %s; this run adds to it; /apply brings it all into your tree)", r.Worktree, t.pendingWords(context.Background()))
	}
	return fmt.Sprintf("reads:   the pending run's worktree %s (%s)", r.Worktree, t.pendingWords(context.Background()))
}

// pendingWords is "3 files changed, not applied" for the pending run.
func (t *Tracker) pendingWords(ctx context.Context) string {
	r := t.Pending()
	if r == nil {
		return ""
	}
	files := t.pendingFiles
	if t.work == nil || t.work.Run != r.ID {
		if ch, _, err := r.Changes(ctx); err == nil {
			files = len(ch)
		}
	}
	return render.Count(files, "file") + " changed, not applied"
}

// PendingLine is the pending run in a line for the panel and /status
// ("" when none): "3 files changed, not applied".
func (t *Tracker) PendingLine() string {
	if t.Pending() == nil {
		return ""
	}
	return render.Count(t.pendingFiles, "file") + " changed, not applied"
}

// applyWords names each path of an apply or undo plan.
func applyWords(p *runs.Plan) string {
	var b strings.Builder
	width := 0
	for i, pp := range p.Paths {
		if i < maxSummaryFiles*5 {
			width = max(width, len([]rune(render.InertLine(pp.Path))))
		}
	}
	for i, pp := range p.Paths {
		if i == maxSummaryFiles*5 {
			fmt.Fprintf(&b, "\n  … and %d more", len(p.Paths)-i)
			break
		}
		path := render.InertLine(pp.Path)
		pad := strings.Repeat(" ", max(0, width-len([]rune(path))))
		hunks := ""
		if pp.Hunks > 0 {
			hunks = ", " + render.Count(pp.Hunks, "hunk")
		}
		var what string
		switch {
		case pp.Conflict != "":
			what = "CONFLICT: " + render.InertLine(pp.Conflict)
		case pp.Action == runs.ActWrite:
			what = fmt.Sprintf("write   (+%d -%d%s)", pp.Added, pp.Deleted, hunks)
		case pp.Action == runs.ActMerge && p.Undo:
			what = "merge   (you changed it since: your edits kept, the apply's taken out)"
		case pp.Action == runs.ActMerge:
			what = fmt.Sprintf("merge   (+%d -%d%s; you changed it too: your edits kept)", pp.Added, pp.Deleted, hunks)
		case pp.Action == runs.ActCreate:
			what = fmt.Sprintf("create  (+%d, new file)", pp.Added)
		case pp.Action == runs.ActSame:
			what = "same    (already so in your tree: nothing to write)"
		case pp.Action == runs.ActKeep:
			what = "kept    (the run deleted it; apply never deletes a file: remove it yourself if you want it gone)"
		case pp.Action == runs.ActRestore:
			what = "restore (what it held before the apply)"
		case pp.Action == runs.ActDelete:
			what = "delete  (the apply made it, and it is as the apply left it)"
		}
		fmt.Fprintf(&b, "\n  %s%s  %s", path, pad, what)
	}
	return b.String()
}

// runName is "codex /execute at 15:04:05 (run 20261204-...)".
func (t *Tracker) runName(r *runs.Run) string {
	at := r.Started
	return fmt.Sprintf("%s /%s at %s (run %s)", r.Agent, r.Command, at.Local().Format("15:04:05"), r.ID)
}

// Apply previews the pending run's apply, asks, and applies it.
func (t *Tracker) Apply(ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return errors.New("/apply takes no arguments (it applies the pending run; /runs lists runs)")
	}
	r := t.Pending()
	if r == nil {
		if t.inPlace {
			t.d.Say("nothing to apply: the room runs --in-place, so the executor's edits are in your tree already (/undo reverts them)")
			return nil
		}
		t.d.Say("nothing to apply: no pending run in this room (/runs lists the runs kept in your cache folder; relay-baton apply --run ID applies one)")
		return nil
	}
	_, err := t.ApplyRun(ctx, r)
	return err
}

// ApplyRun previews applying r, asks (unless --yes) and applies it; it
// returns the plan (nil when nothing could be read).
func (t *Tracker) ApplyRun(ctx context.Context, r *runs.Run) (*runs.Plan, error) {
	bg := context.WithoutCancel(ctx)
	plan, err := r.PlanApply(bg)
	if err != nil {
		return nil, fmt.Errorf("/apply: %v", err)
	}
	if len(plan.Paths) == 0 {
		t.d.Say("nothing to apply: %s changed no file (/undo discards it)", t.runName(r))
		return plan, nil
	}
	head := fmt.Sprintf("/apply brings the change of %s into your tree, three-way (your edits made meanwhile are kept; your index and HEAD are not touched):", t.runName(r))
	meta := t.applyMeta(r, plan, false)
	if plan.Conflicts > 0 {
		t.d.Say("%s%s", head, applyWords(plan))
		why := fmt.Sprintf("%s: nothing was applied", render.Count(plan.Conflicts, "conflict"))
		meta.Refused = why
		t.d.Emit(events.RoleRelayBaton, "apply refused: "+why, nil, meta)
		t.d.Say("/apply refused, %s. Your files are as they were. To settle a conflict, edit that file in the run's worktree %s until it reads as you want it (one that matches your file applies as \"same\"), or take your own edit of it out; then /apply again. /diff shows the run's side; /undo discards the run.", why, r.Worktree)
		return plan, nil
	}
	if plan.Writes() == 0 {
		t.d.Say("%s%s", head, applyWords(plan))
		t.d.Say("nothing to apply: your tree has every change of %s already (apply never deletes a file). The run stays pending: /undo discards it; your files are not touched.", t.runName(r))
		return plan, nil
	}
	words := head + applyWords(plan)
	t.d.Say("%s", words)
	if ok, err := t.d.Confirm("apply", words, "apply these? [y/N] "); !ok {
		if err == nil {
			t.d.Say("nothing applied; the run stays pending (/apply again, /undo discards it).")
		}
		return plan, err
	}
	if err := r.Apply(bg, plan); err != nil {
		if errors.Is(err, runs.ErrMoved) || errors.Is(err, runs.ErrElsewhere) {
			t.d.Say("/apply: %v", err)
			return plan, nil
		}
		return plan, fmt.Errorf("/apply: %v", err)
	}
	n := plan.Writes()
	t.d.Say("applied %s of %s. /undo takes out exactly what was written; the worktree is removed.", render.Count(n, "file"), t.runName(r))
	t.d.Emit(events.RoleRelayBaton, fmt.Sprintf("applied %s of %s", render.Count(n, "file"), t.runName(r)), nil, meta)
	t.pendingFiles = 0
	return plan, nil
}

func (t *Tracker) applyMeta(r *runs.Run, p *runs.Plan, undo bool) events.ChangesMeta {
	m := events.ChangesMeta{Agent: r.Agent, Command: r.Command, Files: events.Int(len(p.Paths)), Before: r.Base, After: p.After,
		Undo: undo, Apply: !undo, Run: r.ID, Worktree: r.Worktree, Discard: p.Discard}
	a, d := 0, 0
	for _, pp := range p.Paths {
		a, d = a+pp.Added, d+pp.Deleted
		if len(m.Paths) < maxLoggedPaths {
			m.Paths = append(m.Paths, pp.Path)
		}
	}
	m.Added, m.Deleted = events.Int(a), events.Int(d)
	return m
}

// UndoRun previews undoing r (a pending run: discard it; an applied one:
// take out what the apply wrote), asks and does it.
func (t *Tracker) UndoRun(ctx context.Context, r *runs.Run) error {
	bg := context.WithoutCancel(ctx)
	plan, err := r.PlanUndo(bg)
	if err != nil {
		return fmt.Errorf("/undo: %v", err)
	}
	meta := t.applyMeta(r, plan, true)
	if !plan.Discard && len(plan.Paths) == 0 {
		t.d.Say("nothing to take out: /apply wrote no file for %s (its changes were in your tree already); your files are not touched.", t.runName(r))
		return nil
	}
	var words string
	if plan.Discard {
		words = fmt.Sprintf("/undo discards %s: its worktree %s goes (%s); your files are not touched.", t.runName(r), r.Worktree, t.pendingWords(bg))
		t.d.Say("%s", words)
	} else {
		words = fmt.Sprintf("/undo takes out what /apply wrote for %s, three-way (edits you made since are kept):%s", t.runName(r), applyWords(plan))
		t.d.Say("%s", words)
		if plan.Conflicts > 0 {
			why := fmt.Sprintf("%s: nothing was reverted", render.Count(plan.Conflicts, "conflict"))
			meta.Refused = why
			t.d.Emit(events.RoleRelayBaton, "undo refused: "+why, nil, meta)
			t.d.Say("/undo refused, %s. Reverting would lose your edits; /diff shows what the apply wrote, and your editor or git restore can take out what you choose.", why)
			return nil
		}
	}
	q, kind := "take these out? [y/N] ", "undo"
	if plan.Discard {
		q, kind = "discard the run? [y/N] ", "discard"
	}
	if ok, err := t.d.Confirm(kind, words, q); !ok {
		if err == nil {
			t.d.Say("nothing undone.")
		}
		return err
	}
	if err := r.Undo(bg, plan); err != nil {
		if errors.Is(err, runs.ErrMoved) || errors.Is(err, runs.ErrElsewhere) {
			t.d.Say("/undo: %v", err)
			return nil
		}
		return fmt.Errorf("/undo: %v", err)
	}
	if plan.Discard {
		t.d.Say("discarded %s; no worktree is left.", t.runName(r))
		t.d.Emit(events.RoleRelayBaton, "discarded "+t.runName(r), nil, meta)
	} else {
		t.d.Say("took out %s of %s.", render.Count(plan.Writes(), "file"), t.runName(r))
		t.d.Emit(events.RoleRelayBaton, fmt.Sprintf("undo: took out %s of %s", render.Count(plan.Writes(), "file"), t.runName(r)), nil, meta)
	}
	if t.run == r {
		t.run, t.work, t.pendingFiles = nil, nil, 0
	}
	return nil
}

// Runs is /runs: the runs kept for the repository.
func (t *Tracker) Runs(ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return errors.New("/runs takes no arguments")
	}
	list, err := RunsOf(ctx, t.d.Root)
	if err != nil {
		return fmt.Errorf("/runs: %v", err)
	}
	if len(list) == 0 {
		t.d.Say("no runs kept for this repository (an executor run's worktree appears here until it is applied or discarded)")
		return nil
	}
	t.d.Print(RunsText(list, t.d.Now(), t.run))
	return nil
}

// RunInfo is one kept run, for runs / /runs (--json).
type RunInfo struct {
	ID       string    `json:"id"`
	State    string    `json:"state"`
	Agent    string    `json:"agent,omitempty"`
	Command  string    `json:"command,omitempty"`
	Worktree string    `json:"worktree"`
	Started  time.Time `json:"started"`
	Files    int       `json:"files"`
	Added    int       `json:"added"`
	Deleted  int       `json:"deleted"`
	Error    string    `json:"error,omitempty"`
	// Writer is the executor writing the run now ("" none): who holds it.
	Writer string `json:"writer,omitempty"`
	run    *runs.Run
}

// RunsOf lists the runs kept for root with their change sizes.
func RunsOf(ctx context.Context, root string) ([]RunInfo, error) {
	list, err := runs.List(root)
	if err != nil {
		return nil, err
	}
	out := make([]RunInfo, 0, len(list))
	for _, r := range list {
		in := RunInfo{ID: r.ID, State: r.State, Agent: r.Agent, Command: r.Command, Worktree: r.Worktree, Started: r.Started, run: r}
		var busy *runs.BusyError
		if errors.As(r.Busy("apply"), &busy) {
			in.Writer = writerWords(busy.Holder)
		}
		if r.State == runs.Applied {
			in.Worktree = ""
			in.Files = len(r.Wrote)
		} else if ch, _, err := r.Changes(ctx); err == nil {
			in.Files = len(ch)
			for _, c := range ch {
				in.Added, in.Deleted = in.Added+c.Added, in.Deleted+c.Deleted
			}
		} else {
			in.Error = err.Error()
		}
		out = append(out, in)
	}
	return out, nil
}

// RunsText renders runs, one a line, the room's own marked.
func RunsText(list []RunInfo, now time.Time, mine *runs.Run) string {
	var b strings.Builder
	for _, in := range list {
		mark := " "
		if mine != nil && mine.ID == in.ID {
			mark = "*"
		}
		state := fmt.Sprintf("pending, %s changed +%d -%d, not applied", render.Count(in.Files, "file"), in.Added, in.Deleted)
		next := "apply: relay-baton apply --run " + in.ID + "; discard: relay-baton undo --run " + in.ID
		switch {
		case in.State == runs.Applied:
			state = fmt.Sprintf("applied (%s written)", render.Count(in.Files, "file"))
			next = "take it out: relay-baton undo --run " + in.ID
		case in.Error != "":
			state = "pending, unreadable: " + render.InertLine(in.Error)
			next = "discard: relay-baton undo --run " + in.ID
		}
		if in.Writer != "" {
			next = "being written by " + render.InertLine(in.Writer) + ": apply or discard it once that run ends"
		}
		fmt.Fprintf(&b, "%s %s  %s /%s, %s ago: %s\n", mark, in.ID, in.Agent, in.Command, render.Ago(now.Sub(in.Started)), state)
		if in.Worktree != "" {
			fmt.Fprintf(&b, "    worktree %s\n", in.Worktree)
		}
		fmt.Fprintf(&b, "    %s\n", next)
	}
	return b.String()
}

// writerWords names the holder of a run: "codex /continue (pid 4242,
// session 0f3c…)".
func writerWords(h runs.Holder) string {
	what := "an executor"
	if h.Agent != "" {
		what = h.Agent + " /" + h.Command
	}
	if h.PID > 0 {
		what += fmt.Sprintf(" (pid %d", h.PID)
		if h.Session != "" {
			what += ", session " + h.Session
		}
		what += ")"
	}
	return what
}

// FindRun is the kept run id of the room's repository ("" the newest
// pending one, else the newest applied one).
func (t *Tracker) FindRun(id string) (*runs.Run, error) {
	if t.d.Root == "" {
		return nil, errors.New("not in a git repository")
	}
	if id != "" {
		r, err := runs.Load(t.d.Root, id)
		if err != nil {
			return nil, fmt.Errorf("no run %s for this repository (relay-baton runs lists them): %v", id, err)
		}
		return r, nil
	}
	if r := runs.Latest(t.d.Root, runs.Pending); r != nil {
		return r, nil
	}
	if r := runs.Latest(t.d.Root, runs.Applied); r != nil {
		return r, nil
	}
	return nil, errors.New("no run kept for this repository (relay-baton runs lists them)")
}

// UseRun makes r the room's run (resume, the one-shot commands).
func (t *Tracker) UseRun(ctx context.Context, r *runs.Run) {
	t.CancelReserved()
	t.setRun(r)
	if r.State == runs.Pending {
		r.Watch() // /apply may follow: see afterWorktreeRun
		if ch, after, err := r.Changes(context.WithoutCancel(ctx)); err == nil {
			t.pendingFiles = len(ch)
			if len(ch) > 0 {
				t.work = &Work{Command: r.Command, Agent: r.Agent, At: r.Started, Before: r.Base, After: after, Files: ch, Run: r.ID}
			}
		}
	}
}

// setRun makes r the room's run, letting the watch over the one it
// replaces go.
func (t *Tracker) setRun(r *runs.Run) {
	if t.run != nil && t.run != r {
		t.run.Unwatch()
	}
	t.run = r
}

// Resume brings back the newest pending run of the repository (a room
// that ended, or was killed, before its apply): a line for the resume
// recap, "" when there is none.
func (t *Tracker) Resume(ctx context.Context) string {
	if !t.WorktreeMode() || t.Pending() != nil {
		return ""
	}
	r := runs.Latest(t.d.Root, runs.Pending)
	if r == nil {
		return ""
	}
	t.UseRun(ctx, r)
	return fmt.Sprintf("pending run: %s, %s, worktree %s (/diff shows it, /apply brings it in, /undo discards it)", t.runName(r), t.PendingLine(), r.Worktree)
}

// KeptRunsLine names the pending runs an earlier room left (a room that
// ended, or was killed, before its apply), for a room that does not
// resume: "" when there is none.
func (t *Tracker) KeptRunsLine() string {
	if !t.WorktreeMode() || t.Pending() != nil {
		return ""
	}
	n := 0
	list, _ := runs.List(t.d.Root)
	for _, r := range list {
		if r.State == runs.Pending {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s left by an earlier room, not applied: /runs lists them; /resume brings the newest back (then /diff, /apply or /undo)", render.Count(n, "executor run"))
}

// short is a commit id cut to 10 characters.
func short(id string) string {
	if id == "" {
		return "(no commit)"
	}
	return id[:min(10, len(id))]
}

// Adopt takes the repository's executor runs as another screen left them:
// this room's run that was applied or discarded there is no longer pending
// here, and a run another screen's executor left pending (made, newest
// last) becomes this room's when it has none, as a resume brings one back
// (/diff, /apply, /undo, the panel).
func (t *Tracker) Adopt(ctx context.Context, made []string) {
	if !t.WorktreeMode() {
		return
	}
	if r := t.run; r != nil && !r.Reserved() {
		now, err := runs.Load(t.d.Root, r.ID)
		switch {
		case err != nil: // discarded there: its record is gone
			t.setRun(nil)
			t.pendingFiles = 0
			if t.work != nil && t.work.Run == r.ID {
				t.work = nil
			}
		case now.State == runs.Pending:
			t.UseRun(ctx, now)
		case now.State != r.State:
			t.setRun(now)
			t.pendingFiles = 0
		}
	}
	for i := len(made) - 1; i >= 0 && t.Pending() == nil; i-- {
		if r, err := runs.Load(t.d.Root, made[i]); err == nil && r.State == runs.Pending {
			t.UseRun(ctx, r)
		}
	}
}
