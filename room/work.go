package room

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
// tree in its snapshot store (snapshots, continue.go: a private index and
// object folder, the repository untouched). When the two trees differ the
// room prints what changed, /diff shows it and /undo writes the files of
// the "before" tree back, only those the run changed, and only when they
// still hold what the run left. Nothing is committed, the repository's
// index is never written, and the store lives as long as the room.

// runWork is the last agent run that changed the working tree.
type runWork struct {
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

// snapshotStore is the room's one snapshot store, made on first use; nil
// when the room writes nothing or git cannot make one.
func (e *Engine) snapshotStore(ctx context.Context) *gitrepo.Snapshots {
	if e.snaps == nil && e.Root != "" && !e.ReadOnly() {
		s := gitrepo.NewSnapshots(context.WithoutCancel(ctx), e.Root)
		if !s.Ready() {
			return nil
		}
		e.snaps = s
	}
	return e.snaps
}

// recordsWork reports whether a run of this role may change the tree and
// so is snapshotted before and after.
func recordsWork(role agents.Role) bool { return role == agents.RoleExecutor }

// treeBefore records the working tree before a run ("" when it cannot):
// the run's worktree, or the user's tree in place.
func (e *Engine) treeBefore(ctx context.Context, req agents.Request) string {
	if !recordsWork(req.Role) {
		return ""
	}
	if r := e.Pending(); r != nil && req.Dir == r.Worktree {
		t, err := r.Snapshot(context.WithoutCancel(ctx))
		if err != nil {
			return ""
		}
		return t
	}
	if req.Dir != e.Root {
		return ""
	}
	s := e.snapshotStore(ctx)
	if s == nil {
		return ""
	}
	// What git ignores now, before the tree: nothing listed here is ever
	// deleted by /undo. Without the list there is no /undo record.
	ign, err := gitrepo.Ignored(context.WithoutCancel(ctx), e.Root)
	if err != nil {
		return ""
	}
	t, err := s.Tree(context.WithoutCancel(ctx))
	if err != nil {
		return ""
	}
	e.ignoredBefore = ign
	return t
}

// afterRun records the tree after a run that started from before; when
// the run changed it, it becomes the work /diff and /undo act on, and its
// summary is printed and logged.
func (e *Engine) afterRun(ctx context.Context, command string, req agents.Request, before string) {
	if before == "" {
		return
	}
	agent := req.Agent
	bg := context.WithoutCancel(ctx)
	if r := e.Pending(); r != nil && req.Dir == r.Worktree {
		e.afterWorktreeRun(bg, r, command, agent, before, ctx.Err() != nil)
		return
	}
	after, err := e.snaps.Tree(bg)
	if err != nil || after == before {
		return
	}
	files, err := e.snaps.Changed(bg, before, after)
	if err != nil || len(files) == 0 {
		return
	}
	e.work = &runWork{Command: command, Agent: agent, At: e.now(), Before: before, After: after, Files: files, Ignored: e.ignoredBefore}
	text := changeSummary(files)
	e.Say("%s\n  /diff shows the changes, /undo reverts them", text)
	a, d := 0, 0
	for _, f := range files {
		a, d = a+f.Added, d+f.Deleted
	}
	// replay prints "changes: <text>": the text does not repeat the kind.
	e.emitChanges(e.work, fmt.Sprintf("%s by %s /%s, +%d -%d: %s", render.Count(len(files), "file"), agent, command, a, d, changedNames(files, 10)), false, "")
}

// afterWorktreeRun says what a run in r's worktree changed: the run's
// whole pending change (since the worktree was made), not applied. A run
// stopped (Ctrl-C) before its worktree held any change is discarded, as a
// declined preview is: nothing is left pending.
func (e *Engine) afterWorktreeRun(ctx context.Context, r *runs.Run, command, agent, before string, stopped bool) {
	files, after, err := r.Changes(ctx)
	if err != nil {
		e.Say("cannot read the run's worktree %s: %v", r.Worktree, err)
		return
	}
	e.pendingFiles = len(files)
	if after == before {
		if len(files) == 0 && stopped {
			if err := r.Discard(ctx); err != nil {
				e.Say("%s was stopped before it changed a file; its worktree %s could not be removed (%v): /undo discards it", agent, r.Worktree, err)
				return
			}
			e.run, e.pendingFiles = nil, 0
			e.Say("%s was stopped before it changed a file: its worktree %s is removed, nothing is pending", agent, r.Worktree)
			return
		}
		if len(files) == 0 {
			e.Say("%s changed no file; the worktree %s stays until /undo discards it", agent, r.Worktree)
		}
		return
	}
	e.work = &runWork{Command: command, Agent: agent, At: e.now(), Before: r.Base, After: after, Files: files, Run: r.ID}
	e.Say("%s\n  not applied: your files are as they were. /diff shows the changes, /apply brings them into your tree, /undo discards them\n  worktree: %s",
		changeSummary(files), r.Worktree)
	a, d := 0, 0
	for _, f := range files {
		a, d = a+f.Added, d+f.Deleted
	}
	e.emitChanges(e.work, fmt.Sprintf("%s by %s /%s, +%d -%d, not applied: %s", render.Count(len(files), "file"), agent, command, a, d, changedNames(files, 10)), false, "")
}

// emitChanges logs a changes event: a run's summary, or an /undo.
func (e *Engine) emitChanges(w *runWork, text string, undo bool, refused string) {
	m := events.ChangesMeta{Agent: w.Agent, Command: w.Command, Files: events.Int(len(w.Files)), Before: w.Before, After: w.After, Undo: undo, Refused: refused, Run: w.Run}
	if e.run != nil && e.run.ID == w.Run {
		m.Worktree = e.run.Worktree
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
	e.emit(role, text, nil, m)
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

func (e *Engine) cmdDiff(ctx context.Context, args string) error {
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
	if e.Root == "" {
		return errors.New("/diff needs a git repository")
	}
	var diff, what string
	if all {
		if len(paths) > 0 {
			return errors.New("/diff --all takes no file: it shows the whole working tree against HEAD")
		}
		diff, what = gitrepo.Diff(ctx, e.Root), "the working tree against HEAD"
	} else if r := e.run; r != nil && !r.Reserved() {
		var rel []string
		if len(paths) > 0 {
			var err error
			if rel, err = e.repoPaths(paths); err != nil {
				return err
			}
		}
		var err error
		if diff, err = r.Diff(ctx, rel...); err != nil {
			return fmt.Errorf("/diff: %v", err)
		}
		what = "the changes of " + e.runName(r) + ", not applied (worktree " + r.Worktree + ")"
		if r.State == runs.Applied {
			what = "the changes of " + e.runName(r) + ", as applied"
		}
		if len(paths) > 0 && diff == "" {
			e.Say("the run did not change %s", strings.Join(paths, " "))
			return nil
		}
	} else {
		w := e.work
		if w == nil {
			e.Say("no agent run in this room has changed files yet (/diff --all shows the working tree against HEAD)")
			return nil
		}
		args := []string{"diff", "--no-renames", w.Before, w.After}
		if len(paths) > 0 {
			rel, err := e.repoPaths(paths)
			if err != nil {
				return err
			}
			args = append(append(args, "--"), rel...)
		}
		var err error
		if diff, err = e.snaps.Run(ctx, args...); err != nil {
			return fmt.Errorf("/diff: %v", err)
		}
		what = fmt.Sprintf("the changes of %s /%s at %s", w.Agent, w.Command, w.At.Local().Format("15:04:05"))
		if len(paths) > 0 && diff == "" {
			e.Say("%s did not change %s (it changed: %s)", w.Agent, strings.Join(paths, " "), changedNames(w.Files, 10))
			return nil
		}
	}
	if strings.TrimSpace(diff) == "" {
		e.Say("no changes: %s are the same", what)
		return nil
	}
	cut := ""
	if len(diff) > maxDiffBytes {
		diff, cut = diff[:maxDiffBytes], fmt.Sprintf("… (cut at %d MB; git diff shows the rest)\n", maxDiffBytes>>20)
	}
	e.Say("diff: %s", what)
	if d, ok := e.term.(diffScreen); ok {
		d.ShowDiff(render.Inert(diff) + cut)
		return nil
	}
	e.showLong(colorDiff(diff, e.out.color) + cut)
	return nil
}

// diffScreen is a Terminal that shows a diff apart from the rest of what
// the room prints (the page colours its lines); it is handed the diff
// made inert.
type diffScreen interface {
	ShowDiff(diff string)
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
func (e *Engine) repoPaths(paths []string) ([]string, error) {
	base := e.chat.dir
	if base == "" {
		base = e.Root
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
		rel, err := filepath.Rel(e.Root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is outside the repository %s", p, e.Root)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// colorDiff sanitizes a diff (file contents are untrusted: no control byte
// reaches the terminal) and colours it when useColor: added lines green,
// removed red, hunk heads cyan, file heads bold.
func colorDiff(diff string, useColor bool) string {
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

// pagerTerminal is a Terminal that can show a long text in a pager.
type pagerTerminal interface {
	// Page shows text in the pager; false when it did not (no terminal,
	// the text fits, no pager) and the caller prints it.
	Page(text string) bool
}

// showLong prints text, or pages it when the terminal can and it is
// taller than the screen.
func (e *Engine) showLong(text string) {
	if p, ok := e.term.(pagerTerminal); ok && p.Page(text) {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	e.out.raw(text)
}

func (e *Engine) cmdUndo(ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/undo takes no arguments (it reverts the last agent run's changes)")
	}
	if r := e.run; r != nil && !r.Reserved() {
		return e.UndoRun(ctx, r)
	}
	w := e.work
	if w == nil {
		e.Say("nothing to undo: no agent run in this room has changed files (/runs lists the runs kept from earlier rooms)")
		return nil
	}
	bg := context.WithoutCancel(ctx)
	now, err := e.snaps.Tree(bg)
	if err != nil {
		return fmt.Errorf("/undo: cannot read the working tree: %v", err)
	}
	// Every file the run changed must still hold what the run left.
	since, err := e.snaps.Changed(bg, w.After, now)
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
		e.Say("/undo refused, nothing reverted: %s. Reverting would lose those edits; /diff --all shows the working tree, and git restore or your editor can put back what you choose.", why)
		e.emitChanges(w, "undo refused: "+why, true, why)
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
	e.Say("%s", b.String())
	if ok, err := e.yesTo("revert", b.String(), "revert these files? [y/N] "); !ok {
		if err == nil {
			e.Say("nothing reverted.")
		}
		return err
	}
	if err := e.snaps.Restore(bg, w.Before, revert); err != nil {
		e.emitChanges(w, "undo failed: "+err.Error(), true, err.Error())
		return fmt.Errorf("/undo: %v (some files may be reverted: /diff --all shows the working tree)", err)
	}
	e.Say("reverted %s of %s /%s.", render.Count(len(revert), "file"), w.Agent, w.Command)
	e.emitChanges(w, fmt.Sprintf("undo: reverted %s of %s /%s", render.Count(len(revert), "file"), w.Agent, w.Command), true, "")
	e.work = nil
	return nil
}

// ColorDiff is colorDiff for the one-shot diff command.
func ColorDiff(diff string, useColor bool) string { return colorDiff(diff, useColor) }
