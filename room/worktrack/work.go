package worktrack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/gitrepo"

	"github.com/fatih/color"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/runs"
)

// The work an agent run did to the working tree, and the way back.
//
// Before and after each run that may write (the executor's: /execute, the
// executor half of a /continue step, /handoff) the room records the working
// tree in its snapshot store (gitrepo.Snapshots: a private index and
// object folder, the repository untouched). When the two trees differ the
// room prints what changed, /diff shows it and /undo writes the files of
// the "before" tree back, only those the run changed, and only when they
// still hold what the run left. Nothing is committed, the repository's
// index is never written, and the store lives as long as the room.

// Tracker is the room's account of the executor's work: the run in a
// worktree of its own (reserved, pending or applied), or the last run in
// place and its snapshots; it answers /diff, /apply, /undo and /runs.
// Like the engine that drives it, it is used by one turn at a time.
type Tracker struct {
	d             Deps
	snaps         *gitrepo.Snapshots // the working tree's snapshots, made on first use
	work          *Work              // the last run that changed the tree: /diff, /undo
	ignoredBefore []string           // what git ignored before the last run in place
	// The executor's worktree: the room's run (reserved, pending or
	// applied; nil: none), why none could be reserved, the user's choices
	// from worktree.json, and how many files the pending run changed.
	inPlace      bool
	run          *runs.Run
	runErr       error
	opts         runs.Options
	pendingFiles int
}

// Deps is what the tracker takes from the engine that drives it.
type Deps struct {
	Root      string // the repository ("" outside one)
	SessionID string // the room's session, named in a run's hold
	ReadOnly  bool   // the room writes nothing: no snapshot, no worktree
	// Dir is the folder paths typed at the room are relative to ("" = Root).
	Dir string
	// InPlace runs the executor in the user's tree (--in-place, or
	// "in_place" in worktree.json); Options are worktree.json's copies
	// and links.
	InPlace bool
	Options runs.Options
	Now     func() time.Time
	Say     func(format string, a ...any)
	// Emit logs an event and returns its id.
	Emit func(role events.Role, text string, refs map[string]string, meta events.Meta) string
	// Confirm previews a change to the user's files that text describes
	// and asks question (kind: apply, undo, discard or revert); false
	// with nil is a no.
	Confirm func(kind, text, question string) (bool, error)
	// ShowDiff shows a diff (raw: the caller makes it inert) and cut, the
	// note of a diff cut short.
	ShowDiff func(diff, cut string)
	// Print prints text as it is.
	Print func(string)
}

// New is a tracker for d.Root.
func New(d Deps) *Tracker {
	return &Tracker{d: d, inPlace: d.InPlace, opts: d.Options}
}

// Close removes a reserved run's empty folder and closes the snapshot
// store.
func (t *Tracker) Close() {
	t.CancelReserved()
	if t.run != nil {
		t.run.Unwatch()
	}
	runs.WaitRemovals() // an applied or discarded run's worktree, removed in the background
	if t.snaps != nil {
		t.snaps.Close()
	}
}

// Files is what the last run that changed the tree changed (nil: none).
func (t *Tracker) Files() []gitrepo.FileChange {
	if t.work == nil {
		return nil
	}
	return t.work.Files
}

// Show makes r the tracker's run, as its record last counted it (files
// changed), without reading its worktree: a view of the room.
func (t *Tracker) Show(r *runs.Run, files int) { t.run, t.pendingFiles = r, files }

// Work is the last agent run that changed the working tree.
type Work struct {
	Command, Agent string
	At             time.Time
	Before, After  string // tree ids in the snapshot store (or the run's)
	Files          []gitrepo.FileChange
	Run            string // the worktree run's id ("" in place)
	// Ignored is what git ignored before a run in place: a path the run
	// made look new (un-ignored) that is here existed before it, and
	// /undo never deletes it.
	Ignored []string
}

// Snapshots is the room's one snapshot store, made on first use; nil
// when the room writes nothing or git cannot make one.
func (t *Tracker) Snapshots(ctx context.Context) *gitrepo.Snapshots {
	if t.snaps == nil && t.d.Root != "" && !t.d.ReadOnly {
		s := gitrepo.NewSnapshots(context.WithoutCancel(ctx), t.d.Root)
		if !s.Ready() {
			return nil
		}
		t.snaps = s
	}
	return t.snaps
}

// recordsWork reports whether a run of this role may change the tree and
// so is snapshotted before and after.
func recordsWork(role agents.Role) bool { return role == agents.RoleExecutor }

// Before records the working tree before a run ("" when it cannot):
// the run's worktree, or the user's tree in place.
func (t *Tracker) Before(ctx context.Context, req agents.Request) string {
	if !recordsWork(req.Role) {
		return ""
	}
	if r := t.Pending(); r != nil && req.Dir == r.Worktree {
		tree, err := r.Snapshot(context.WithoutCancel(ctx))
		r.Unwatch() // the executor writes it now: afterWorktreeRun watches it again
		if err != nil {
			return ""
		}
		return tree
	}
	if req.Dir != t.d.Root {
		return ""
	}
	s := t.Snapshots(ctx)
	if s == nil {
		return ""
	}
	// What git ignores now, before the tree: nothing listed here is ever
	// deleted by /undo. Without the list there is no /undo record.
	ign, err := gitrepo.Ignored(context.WithoutCancel(ctx), t.d.Root)
	if err != nil {
		return ""
	}
	tree, err := s.Tree(context.WithoutCancel(ctx))
	if err != nil {
		return ""
	}
	t.ignoredBefore = ign
	return tree
}

// After records the tree after a run that started from before; when
// the run changed it, it becomes the work /diff and /undo act on, and its
// summary is printed and logged.
func (t *Tracker) After(ctx context.Context, command string, req agents.Request, before string) {
	if before == "" {
		return
	}
	agent := req.Agent
	bg := context.WithoutCancel(ctx)
	if r := t.Pending(); r != nil && req.Dir == r.Worktree {
		t.afterWorktreeRun(bg, r, command, agent, before, ctx.Err() != nil)
		return
	}
	after, err := t.snaps.Tree(bg)
	if err != nil || after == before {
		return
	}
	files, err := t.snaps.Changed(bg, before, after)
	if err != nil || len(files) == 0 {
		return
	}
	t.work = &Work{Command: command, Agent: agent, At: t.d.Now(), Before: before, After: after, Files: files, Ignored: t.ignoredBefore}
	text := changeSummary(files)
	t.d.Say("%s\n  /diff shows the changes, /undo reverts them", text)
	a, d := 0, 0
	for _, f := range files {
		a, d = a+f.Added, d+f.Deleted
	}
	// replay prints "changes: <text>": the text does not repeat the kind.
	t.emitChanges(t.work, fmt.Sprintf("%s by %s /%s, +%d -%d: %s", render.Count(len(files), "file"), agent, command, a, d, changedNames(files, 10)), false, "")
}

// afterWorktreeRun says what a run in r's worktree changed: the run's
// whole pending change (since the worktree was made), not applied. A run
// stopped (Ctrl-C) before its worktree held any change is discarded, as a
// declined preview is: nothing is left pending.
func (t *Tracker) afterWorktreeRun(ctx context.Context, r *runs.Run, command, agent, before string, stopped bool) {
	// The room's watch over the worktree, set before the summary reads
	// it: /apply reads neither the worktree nor the user's files again
	// while nothing changed them (runs.Run.Watch).
	r.Watch()
	files, after, err := r.Changes(ctx)
	if err != nil {
		t.d.Say("cannot read the run's worktree %s: %v", r.Worktree, err)
		return
	}
	t.pendingFiles = len(files)
	if after == before {
		if len(files) == 0 && stopped {
			if err := r.Discard(ctx); err != nil {
				t.d.Say("%s was stopped before it changed a file; its worktree %s could not be removed (%v): /undo discards it", agent, r.Worktree, err)
				return
			}
			t.run, t.pendingFiles = nil, 0
			t.d.Say("%s was stopped before it changed a file: its worktree %s is removed, nothing is pending", agent, r.Worktree)
			return
		}
		if len(files) == 0 {
			t.d.Say("%s changed no file; the worktree %s stays until /undo discards it", agent, r.Worktree)
		}
		return
	}
	t.work = &Work{Command: command, Agent: agent, At: t.d.Now(), Before: r.Base, After: after, Files: files, Run: r.ID}
	t.d.Say("%s\n  not applied: your files are as they were. /diff shows the changes, /apply brings them into your tree, /undo discards them\n  worktree: %s",
		changeSummary(files), r.Worktree)
	a, d := 0, 0
	for _, f := range files {
		a, d = a+f.Added, d+f.Deleted
	}
	t.emitChanges(t.work, fmt.Sprintf("%s by %s /%s, +%d -%d, not applied: %s", render.Count(len(files), "file"), agent, command, a, d, changedNames(files, 10)), false, "")
}

// emitChanges logs a changes event: a run's summary, or an /undo.
func (t *Tracker) emitChanges(w *Work, text string, undo bool, refused string) {
	m := events.ChangesMeta{Agent: w.Agent, Command: w.Command, Files: events.Int(len(w.Files)), Before: w.Before, After: w.After, Undo: undo, Refused: refused, Run: w.Run}
	if t.run != nil && t.run.ID == w.Run {
		m.Worktree = t.run.Worktree
	}
	a, d := 0, 0
	for _, f := range w.Files {
		a, d = a+f.Added, d+f.Deleted
		if len(m.Paths) < maxLoggedPaths {
			m.Paths = append(m.Paths, f.Path)
		}
		switch f.Status {
		case 'A':
			m.NewFiles = append(m.NewFiles, f.Path)
		case 'D':
			m.DeletedFiles = append(m.DeletedFiles, f.Path)
		}
	}
	m.Added, m.Deleted = events.Int(a), events.Int(d)
	role := events.Role(w.Agent)
	if undo {
		role = events.RoleRelayBaton
	}
	t.d.Emit(role, text, nil, m)
}

// maxLoggedPaths caps the paths a changes event lists.
const maxLoggedPaths = 200

// maxSummaryFiles caps the files a change summary lists one a line.
const maxSummaryFiles = 20

// changeSummary is the printed account of a run's work: a head line, then
// one line per file (path sanitized: a file name is untrusted).
func changeSummary(files []gitrepo.FileChange) string {
	a, d, width := 0, 0, 0
	for i, f := range files {
		a, d = a+f.Added, d+f.Deleted
		if i < maxSummaryFiles {
			width = max(width, len([]rune(render.InertLine(f.Path))))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "changed %s: +%d -%d", render.Count(len(files), "file"), a, d)
	for i, f := range files {
		if i == maxSummaryFiles {
			fmt.Fprintf(&b, "\n  … and %d more", len(files)-maxSummaryFiles)
			break
		}
		p := render.InertLine(f.Path)
		fmt.Fprintf(&b, "\n  %s%s  %s", p, strings.Repeat(" ", width-len([]rune(p))), f.Counts())
	}
	return b.String()
}

// maxDiffBytes caps the diff /diff prints or pages.
const maxDiffBytes = 4 << 20

// Diff is /diff: the pending run's change, the last run in place's, or
// (--all) the working tree against HEAD.
func (t *Tracker) Diff(ctx context.Context, args string) error {
	f := strings.Fields(args)
	all := false
	var paths []string
	for _, a := range f {
		switch {
		case a == "--all":
			all = true
		case strings.HasPrefix(a, "-"):
			return fmt.Errorf("/diff: unknown flag %s (usage: /diff [file] or /diff --all)", a)
		default:
			paths = append(paths, a)
		}
	}
	if t.d.Root == "" {
		return errors.New("/diff needs a git repository")
	}
	var diff, what string
	if all {
		if len(paths) > 0 {
			return errors.New("/diff --all takes no file: it shows the whole working tree against HEAD")
		}
		diff, what = gitrepo.Diff(ctx, t.d.Root), "the working tree against HEAD"
	} else if r := t.run; r != nil && !r.Reserved() {
		var rel []string
		if len(paths) > 0 {
			var err error
			if rel, err = t.repoPaths(paths); err != nil {
				return err
			}
		}
		var err error
		if diff, err = r.Diff(ctx, rel...); err != nil {
			return fmt.Errorf("/diff: %v", err)
		}
		what = "the changes of " + t.runName(r) + ", not applied (worktree " + r.Worktree + ")"
		if r.State == runs.Applied {
			what = "the changes of " + t.runName(r) + ", as applied"
		}
		if len(paths) > 0 && diff == "" {
			t.d.Say("the run did not change %s", strings.Join(paths, " "))
			return nil
		}
	} else {
		w := t.work
		if w == nil {
			t.d.Say("no agent run in this room has changed files yet (/diff --all shows the working tree against HEAD)")
			return nil
		}
		args := []string{"diff", "--no-renames", w.Before, w.After}
		if len(paths) > 0 {
			rel, err := t.repoPaths(paths)
			if err != nil {
				return err
			}
			args = append(append(args, "--"), rel...)
		}
		var err error
		if diff, err = t.snaps.Run(ctx, args...); err != nil {
			return fmt.Errorf("/diff: %v", err)
		}
		what = fmt.Sprintf("the changes of %s /%s at %s", w.Agent, w.Command, w.At.Local().Format("15:04:05"))
		if len(paths) > 0 && diff == "" {
			t.d.Say("%s did not change %s (it changed: %s)", w.Agent, strings.Join(paths, " "), changedNames(w.Files, 10))
			return nil
		}
	}
	if strings.TrimSpace(diff) == "" {
		t.d.Say("no changes: %s are the same", what)
		return nil
	}
	cut := ""
	if len(diff) > maxDiffBytes {
		diff, cut = diff[:maxDiffBytes], fmt.Sprintf("… (cut at %d MB; git diff shows the rest)\n", maxDiffBytes>>20)
	}
	t.d.Say("diff: %s", what)
	t.d.ShowDiff(diff, cut)
	return nil
}

// changedNames lists up to n paths of files.
func changedNames(files []gitrepo.FileChange, n int) string {
	var p []string
	for i, f := range files {
		if i == n {
			p = append(p, fmt.Sprintf("… %d more", len(files)-n))
			break
		}
		p = append(p, render.InertLine(f.Path))
	}
	return strings.Join(p, ", ")
}

// repoPaths makes the paths typed at the room (relative to the room's
// folder, or absolute) relative to the repository's root.
func (t *Tracker) repoPaths(paths []string) ([]string, error) {
	base := t.d.Dir
	if base == "" {
		base = t.d.Root
	}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(t.d.Root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is outside the repository %s", p, t.d.Root)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// ColorDiff sanitizes a diff (file contents are untrusted: no control byte
// reaches the terminal) and colours it when useColor: added lines green,
// removed red, hunk heads cyan, file heads bold.
func ColorDiff(diff string, useColor bool) string {
	diff = render.Inert(diff)
	if !useColor {
		return diff
	}
	lines := strings.SplitAfter(diff, "\n")
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		var attrs []color.Attribute
		switch {
		case strings.HasPrefix(body, "diff --git "), strings.HasPrefix(body, "+++ "), strings.HasPrefix(body, "--- "):
			attrs = []color.Attribute{color.Bold}
		case strings.HasPrefix(body, "@@"):
			attrs = []color.Attribute{color.FgCyan}
		case strings.HasPrefix(body, "+"):
			attrs = []color.Attribute{color.FgGreen}
		case strings.HasPrefix(body, "-"):
			attrs = []color.Attribute{color.FgRed}
		}
		b.WriteString(render.Paint(true, body, attrs...))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Undo is /undo: it discards the pending run, takes out an applied one,
// or reverts the last run in place, after a preview.
func (t *Tracker) Undo(ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/undo takes no arguments (it reverts the last agent run's changes)")
	}
	if r := t.run; r != nil && !r.Reserved() {
		return t.UndoRun(ctx, r)
	}
	w := t.work
	if w == nil {
		t.d.Say("nothing to undo: no agent run in this room has changed files (/runs lists the runs kept from earlier rooms)")
		return nil
	}
	bg := context.WithoutCancel(ctx)
	now, err := t.snaps.Tree(bg)
	if err != nil {
		return fmt.Errorf("/undo: cannot read the working tree: %v", err)
	}
	// Every file the run changed must still hold what the run left.
	since, err := t.snaps.Changed(bg, w.After, now)
	if err != nil {
		return fmt.Errorf("/undo: %v", err)
	}
	ran := map[string]bool{}
	for _, f := range w.Files {
		ran[f.Path] = true
	}
	var moved []string
	for _, f := range since {
		if ran[f.Path] {
			moved = append(moved, render.InertLine(f.Path))
		}
	}
	if len(moved) > 0 {
		why := fmt.Sprintf("changed since %s's run: %s", w.Agent, strings.Join(moved, ", "))
		t.d.Say("/undo refused, nothing reverted: %s. Reverting would lose those edits; /diff --all shows the working tree, and git restore or your editor can put back what you choose.", why)
		t.emitChanges(w, "undo refused: "+why, true, why)
		return nil
	}
	// A path the run made look new that git ignored before it existed
	// before the run (.env, un-ignored by an edit of .gitignore): kept.
	var revert []gitrepo.FileChange
	var kept []string
	for _, f := range w.Files {
		if f.Status == 'A' && gitrepo.Covers(w.Ignored, f.Path) {
			kept = append(kept, f.Path)
			continue
		}
		revert = append(revert, f)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "/undo reverts the changes of %s /%s at %s:", w.Agent, w.Command, w.At.Local().Format("15:04:05"))
	for _, p := range kept {
		fmt.Fprintf(&b, "\n  keep     %s (it existed before the run, ignored by git: never deleted)", render.InertLine(p))
	}
	for i, f := range revert {
		if i == maxSummaryFiles {
			fmt.Fprintf(&b, "\n  … and %d more", len(revert)-maxSummaryFiles)
			break
		}
		p := render.InertLine(f.Path)
		switch f.Status {
		case 'A':
			fmt.Fprintf(&b, "\n  delete   %s (new file)", p)
		case 'D':
			fmt.Fprintf(&b, "\n  restore  %s (deleted by the run)", p)
		default:
			fmt.Fprintf(&b, "\n  restore  %s (%s)", p, f.Counts())
		}
	}
	b.WriteString("\n  commits, the index (what you staged) and files the run did not change are left as they are")
	b.WriteString("\n  the run was in place: an edit you made to these files during the run cannot be told apart from the agent's, and is reverted with it")
	t.d.Say("%s", b.String())
	if ok, err := t.d.Confirm("revert", b.String(), "revert these files? [y/N] "); !ok {
		if err == nil {
			t.d.Say("nothing reverted.")
		}
		return err
	}
	if err := t.snaps.Restore(bg, w.Before, revert); err != nil {
		t.emitChanges(w, "undo failed: "+err.Error(), true, err.Error())
		return fmt.Errorf("/undo: %v (some files may be reverted: /diff --all shows the working tree)", err)
	}
	t.d.Say("reverted %s of %s /%s.", render.Count(len(revert), "file"), w.Agent, w.Command)
	t.emitChanges(w, fmt.Sprintf("undo: reverted %s of %s /%s", render.Count(len(revert), "file"), w.Agent, w.Command), true, "")
	t.work = nil
	return nil
}

// Run is the room's run (reserved, pending or applied), nil when none.
func (t *Tracker) Run() *runs.Run { return t.run }
