package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/gitrepo"
)

// entry is one path of a tree diff: modes and blob ids on both sides
// (zeros: absent).
type entry struct {
	Path             string
	Status           byte // 'A', 'D', 'M', 'T'
	OldMode, NewMode string
	OldBlob, NewBlob string
	Added, Deleted   int
	Binary           bool
	Hunks            int
}

// zeroID reports whether id is git's "absent" id (all zeros).
func zeroID(id string) bool { return strings.Trim(id, "0") == "" }

// treeDiff lists the paths that differ between two trees of the run, with
// line counts and hunk counts: one git diff-tree giving the raw records
// (-z: modes, blobs, status, path) then the patch, whose sections come in
// the same order (plumbing: no textconv, no external diff, no colour).
// The last pair's list is kept: two trees have one diff, and /apply
// usually follows the change summary of the same trees.
func (r *Run) treeDiff(ctx context.Context, from, to string) ([]entry, error) {
	r.diffMu.Lock()
	last := r.lastDiff
	r.diffMu.Unlock()
	if last.from == from && last.to == to && from != "" && to != "" {
		return append([]entry(nil), last.list...), nil
	}
	out, err := r.git(ctx, r.Root, "", "diff-tree", "-r", "-z", "--no-renames", "--raw", "-p", from, to)
	if err != nil {
		return nil, err
	}
	list, patch := parseRaw(out)
	countPatch(patch, list)
	r.diffMu.Lock()
	r.lastDiff = treePair{from, to, append([]entry(nil), list...)}
	r.diffMu.Unlock()
	return list, nil
}

// treePair is a tree diff read: its two trees and its paths.
type treePair struct {
	from, to string
	list     []entry
}

// parseRaw reads the -z raw records of a diff-tree at the start of out
// and returns them and what follows them (the patch).
func parseRaw(out string) ([]entry, string) {
	var list []entry
	for strings.HasPrefix(out, ":") {
		meta, rest, ok := strings.Cut(out[1:], "\x00")
		if !ok {
			break
		}
		path, rest, ok := strings.Cut(rest, "\x00")
		head := strings.Fields(meta)
		if !ok || len(head) < 5 {
			break
		}
		list = append(list, entry{Path: path, Status: head[4][0], OldMode: head[0], NewMode: head[1], OldBlob: head[2], NewBlob: head[3]})
		out = rest
	}
	return list, strings.TrimPrefix(out, "\x00")
}

// countPatch counts the added and deleted lines and the hunks of each
// section of a unified diff into list (section i is list[i]); a section
// saying "Binary files ... differ" is binary.
func countPatch(patch string, list []entry) {
	sec, inHunk := -1, false
	for len(patch) > 0 {
		l, rest, _ := strings.Cut(patch, "\n")
		patch = rest
		switch {
		case strings.HasPrefix(l, "diff --git "):
			sec, inHunk = sec+1, false
		case sec < 0 || sec >= len(list):
		case strings.HasPrefix(l, "@@ "):
			list[sec].Hunks++
			inHunk = true
		case !inHunk:
			if strings.HasPrefix(l, "Binary files ") {
				list[sec].Binary = true
			}
		case strings.HasPrefix(l, "+"):
			list[sec].Added++
		case strings.HasPrefix(l, "-"):
			list[sec].Deleted++
		}
	}
}

// FileChanges turns entries into the room's change rows.
func fileChanges(list []entry) []gitrepo.FileChange {
	out := make([]gitrepo.FileChange, len(list))
	for i, e := range list {
		out[i] = gitrepo.FileChange{Path: e.Path, Status: e.Status, Added: e.Added, Deleted: e.Deleted, Binary: e.Binary}
	}
	return out
}

// Snapshot records the worktree now and returns its tree id.
func (r *Run) Snapshot(ctx context.Context) (string, error) {
	if r.State != Pending {
		return r.After, nil
	}
	if tree := r.watchedTree(); tree != "" {
		return tree, nil // nothing changed in the worktree since it was read
	}
	tree, err := r.snapshot(ctx, r.Worktree, r.runIndex())
	if err == nil {
		r.watchRead(tree)
	}
	return tree, err
}

// Changes lists what the run changed since it started (the worktree now
// against the user's tree at the start), with line counts, and the tree
// it read. Of a run its room watches (Watch), it also looks at the
// user's files at those paths for the apply (once per watch).
func (r *Run) Changes(ctx context.Context) ([]gitrepo.FileChange, string, error) {
	after, err := r.Snapshot(ctx)
	if err != nil {
		return nil, "", err
	}
	list, err := r.treeDiff(ctx, r.Base, after)
	if err != nil {
		return nil, "", err
	}
	if r.State == Pending && r.Files != len(list) {
		r.Files = len(list)
		r.saveCount() // a count for the second screen: its loss costs nothing
	}
	if r.State == Pending && r.wantsLook() {
		paths := make([]string, len(list))
		for i, e := range list {
			paths[i] = e.Path
		}
		r.lookAhead(ctx, paths) // a help for the apply: without it, the apply looks itself
	}
	return fileChanges(list), after, nil
}

// saveCount records the run's file count under the run's lock, unless
// another process holds it or changed the run since this one read it
// (its apply's record is never written over with a pending one).
func (r *Run) saveCount() {
	release, err := r.holdFor("count the changes of")
	if err != nil {
		return
	}
	defer release()
	r.save()
}

// Diff is the run's change as a unified diff (paths: only those).
func (r *Run) Diff(ctx context.Context, paths ...string) (string, error) {
	after, err := r.Snapshot(ctx)
	if err != nil {
		return "", err
	}
	args := []string{"diff", "--no-renames", "--no-ext-diff", r.Base, after}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return r.git(ctx, r.Root, "", args...)
}

// DiffSince is the worktree's change since tree from (a /continue step's
// diff), with the name-status lines.
func (r *Run) DiffSince(ctx context.Context, from string) (names, diff string, err error) {
	now, err := r.Snapshot(ctx)
	if err != nil {
		return "", "", err
	}
	if names, err = r.git(ctx, r.Root, "", "diff", "--name-status", "--no-renames", from, now); err != nil {
		return "", "", err
	}
	diff, err = r.git(ctx, r.Root, "", "diff", "--no-renames", "--no-ext-diff", from, now)
	return strings.ReplaceAll(names, "\t", " "), diff, err
}

// Path actions of an apply or undo.
const (
	ActWrite   = "write"   // your copy was what the run started from: the run's version is written
	ActMerge   = "merge"   // you changed it too: a three-way merge keeps both
	ActCreate  = "create"  // a new file
	ActSame    = "same"    // your copy already is the run's version
	ActKeep    = "keep"    // the run deleted it: apply never deletes a file, yours is kept
	ActRestore = "restore" // undo: what the file held before the apply is written back
	ActDelete  = "delete"  // undo: a file the apply created is removed
)

// PathPlan is what an apply or undo does to one path, or why it cannot.
type PathPlan struct {
	Path           string `json:"path"`
	Status         string `json:"status"` // the run's: A, M, D, T
	Action         string `json:"action,omitempty"`
	Hunks          int    `json:"hunks"`
	Added, Deleted int    `json:"-"`
	Conflict       string `json:"conflict,omitempty"` // why it cannot be applied; "" when it can

	curBlob, curMode string // the user's copy when planned ("" absent)
	looked           seen   // the user's file when planned, for the recheck
	blob, mode       string // what is written
	madeDirs         []string
}

// Plan is an apply's or an undo's preview: every path, and the conflicts
// that stop it (then nothing is written).
type Plan struct {
	Run       *Run       `json:"-"`
	Undo      bool       `json:"undo"`
	Discard   bool       `json:"discard"` // undo of a pending run: the worktree goes, your tree is untouched
	After     string     `json:"after,omitempty"`
	Paths     []PathPlan `json:"paths"`
	Conflicts int        `json:"conflicts"`
}

// Writes counts the paths the plan writes or removes.
func (p *Plan) Writes() int {
	n := 0
	for _, pp := range p.Paths {
		if pp.blob != "" || pp.Action == ActDelete {
			n++
		}
	}
	return n
}

// ErrNotPending: apply needs a pending run.
var ErrNotPending = errors.New("the run is not pending: it was applied already (undo takes it out)")

// PlanApply previews bringing the run's change into the user's tree.
func (r *Run) PlanApply(ctx context.Context) (*Plan, error) {
	if r.State != Pending {
		return nil, ErrNotPending
	}
	if err := r.Busy("apply"); err != nil {
		return nil, err
	}
	after, err := r.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the run's worktree: %w", err)
	}
	list, err := r.treeDiff(ctx, r.Base, after)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(list))
	for i, e := range list {
		paths[i] = e.Path
	}
	cur, err := r.userFiles(ctx, paths, true, r.prior())
	if err != nil {
		return nil, err
	}
	plan := &Plan{Run: r, After: after}
	for _, e := range list {
		u := cur[e.Path]
		pp := PathPlan{Path: e.Path, Status: string(e.Status), Hunks: e.Hunks, Added: e.Added, Deleted: e.Deleted, curBlob: u.blob, curMode: u.mode,
			looked: seen{u.stat, u.diskBlob}}
		pp.Action, pp.Conflict = r.decide(ctx, e, u, &pp)
		if pp.Conflict != "" {
			plan.Conflicts++
		}
		plan.Paths = append(plan.Paths, pp)
	}
	return plan, nil
}

// isFileMode: a regular file's mode in a tree.
func isFileMode(m string) bool { return m == "100644" || m == "100755" }

// decide is one path's apply.
func (r *Run) decide(ctx context.Context, e entry, u userFile, pp *PathPlan) (string, string) {
	switch {
	case u.linked:
		return "", "a folder on its way is a symbolic link or a file in your tree"
	case u.onDisk && u.blob == "":
		if u.kind != "" {
			return "", "is " + u.kind + " in your tree"
		}
		if e.Status != 'D' && u.diskBlob == e.NewBlob {
			return ActSame, ""
		}
		return "", "exists in your tree, ignored by git: never touched (copy what you want from the run's worktree by hand)"
	case u.kind != "":
		return "", "is " + u.kind + " in your tree"
	}
	if e.Status == 'D' {
		return ActKeep, ""
	}
	if !isFileMode(e.NewMode) {
		return "", "the run made it a symbolic link or a submodule: not applied (/diff shows it)"
	}
	if e.Status == 'A' {
		switch {
		case u.blob == "":
			pp.blob, pp.mode = e.NewBlob, e.NewMode
			return ActCreate, ""
		case u.blob == e.NewBlob:
			return ActSame, ""
		}
		return "", "you made a file there during the run, with other content"
	}
	if !isFileMode(e.OldMode) {
		return "", "it was a symbolic link or a submodule when the run started"
	}
	switch {
	case u.blob == "":
		return "", "you deleted it during the run"
	case u.blob == e.NewBlob && (u.mode == e.NewMode || u.mode != e.OldMode):
		return ActSame, ""
	}
	mode := e.NewMode
	if u.mode != e.OldMode { // the user changed the mode: theirs is kept
		mode = u.mode
	}
	if u.blob == e.OldBlob {
		pp.blob, pp.mode = e.NewBlob, mode
		return ActWrite, ""
	}
	merged, conflicts, err := r.merge3(ctx, u.blob, e.OldBlob, e.NewBlob)
	switch {
	case err != nil:
		return "", err.Error()
	case conflicts > 0:
		return "", fmt.Sprintf("you changed it during the run: %s the run's (/diff %s shows the run's side)", overlaps(conflicts), e.Path)
	}
	pp.blob, pp.mode = merged, mode
	return ActMerge, ""
}

// overlaps is "1 hunk overlaps" or "N hunks overlap".
func overlaps(n int) string {
	if n == 1 {
		return "1 hunk overlaps"
	}
	return plural(n, "hunk") + " overlap"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// merge3 merges blob theirs into ours from base (git merge-file) and
// stores the result; conflicts > 0 when hunks overlap (nothing stored).
// A binary side is a conflict.
func (r *Run) merge3(ctx context.Context, ours, base, theirs string) (string, int, error) {
	tmp, err := os.MkdirTemp(r.dir, "merge-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(tmp)
	names := []string{"yours", "start", "run"}
	for i, id := range []string{ours, base, theirs} {
		data, err := r.git(ctx, r.Root, "", "cat-file", "blob", id)
		if err != nil {
			return "", 0, err
		}
		if bytes.IndexByte([]byte(data[:min(len(data), 8000)]), 0) >= 0 {
			return "", 1, nil
		}
		if err := os.WriteFile(filepath.Join(tmp, names[i]), []byte(data), 0o600); err != nil {
			return "", 0, err
		}
	}
	out, err := r.git(ctx, tmp, "", "merge-file", "-p", "-q", "-L", "yours", "-L", "start", "-L", "run", "yours", "start", "run")
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
		return "", ee.ExitCode(), nil
	}
	if err != nil {
		return "", 0, err
	}
	res := filepath.Join(tmp, "merged")
	if err := os.WriteFile(res, []byte(out), 0o600); err != nil {
		return "", 0, err
	}
	id, err := r.git(ctx, r.Root, "", "hash-object", "-w", "--no-filters", "--", res)
	return strings.TrimSpace(id), 0, err
}

// ErrConflict: a plan with conflicts is not carried out.
var ErrConflict = errors.New("conflicts: nothing was written")

// ErrMoved: the user's tree changed between the preview and the yes.
var ErrMoved = errors.New("your files changed since the preview: nothing was written (preview again)")

// Apply carries out an apply plan: every path or none. It rechecks the
// user's files first (ErrMoved), writes the paths through the private
// index (git checkout-index: a link in a file's place is replaced, not
// followed), records what it wrote for Undo and removes the worktree.
func (r *Run) Apply(ctx context.Context, plan *Plan) error {
	if r.State != Pending {
		return ErrNotPending
	}
	if plan.Conflicts > 0 {
		return ErrConflict
	}
	release, err := r.holdFor("apply")
	if err != nil {
		return err
	}
	defer release()
	if err := r.recheck(ctx, plan); err != nil {
		return err
	}
	var wrote []AppliedFile
	for i := range plan.Paths {
		pp := &plan.Paths[i]
		if pp.blob == "" {
			continue
		}
		if pp.Action == ActCreate {
			pp.madeDirs = absentDirs(r.Root, pp.Path)
		}
		wrote = append(wrote, AppliedFile{Path: pp.Path, BeforeBlob: pp.curBlob, BeforeMode: pp.curMode, AfterBlob: pp.blob, AfterMode: pp.mode, MadeDirs: pp.madeDirs})
	}
	// Record first: a crash mid-write leaves a record Undo can read.
	r.State, r.After, r.AppliedAt, r.Wrote = Applied, plan.After, time.Now().UTC(), wrote
	if err := r.save(); err != nil {
		r.State, r.After, r.Wrote = Pending, "", nil
		return err
	}
	if err := r.checkout(ctx, plan.Paths); err != nil {
		return fmt.Errorf("write your files: %w (the run is recorded as applied: undo takes out what was written)", err)
	}
	return r.dropWorktree(ctx)
}

// recheck compares the user's files with what the plan saw, at the paths
// it writes or removes: one absent then is absent now (an ignored file
// made meanwhile included), one present holds what it held (its blob and
// mode), and no folder on the way became a link. A file whose settled
// stat is the one the plan saw is not read again (see statAt).
func (r *Run) recheck(ctx context.Context, plan *Plan) error {
	var paths []string
	known := &look{files: map[string]seen{}}
	for _, pp := range plan.Paths {
		if pp.blob != "" || pp.Action == ActDelete {
			paths = append(paths, pp.Path)
			known.files[pp.Path] = pp.looked
		}
	}
	cur, err := r.userFiles(ctx, paths, false, known)
	if err != nil {
		return err
	}
	for _, pp := range plan.Paths {
		u, ok := cur[pp.Path]
		if !ok {
			continue
		}
		moved := u.linked || u.kind != ""
		if pp.curBlob == "" {
			moved = moved || u.onDisk
		} else {
			moved = moved || u.diskBlob != pp.curBlob || u.mode != pp.curMode
		}
		if moved {
			return fmt.Errorf("%w: %s", ErrMoved, pp.Path)
		}
	}
	return nil
}

// checkout writes the plan's blobs into the user's tree through an
// index of their own (only those paths: its size is the plan's, not the
// tree's; written by writeIndex, read by one git checkout-index, which
// applies the user's filters and replaces a link in a file's place rather
// than follow it), and removes the files to delete.
func (r *Run) checkout(ctx context.Context, paths []PathPlan) error {
	var entries []indexEntry
	for _, pp := range paths {
		if pp.blob != "" {
			entries = append(entries, indexEntry{path: pp.Path, mode: pp.mode, blob: pp.blob})
		}
	}
	if len(entries) > 0 {
		index := filepath.Join(r.dir, "write-index")
		if err := writeIndex(index, entries); err != nil {
			return err
		}
		defer os.Remove(index)
		env := []string{"GIT_INDEX_FILE=" + index}
		if _, err := r.gitIn(ctx, r.Root, "", env, "-c", "core.longpaths=true", "checkout-index", "-f", "-q", "-a"); err != nil {
			return err
		}
	}
	for _, pp := range paths {
		if pp.Action != ActDelete {
			continue
		}
		p := filepath.Join(r.Root, filepath.FromSlash(pp.Path))
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, d := range pp.madeDirs {
			if os.Remove(filepath.Join(r.Root, filepath.FromSlash(d))) != nil {
				break
			}
		}
	}
	return nil
}

// gitIn runs git in dir with stdin as its input and the run's objects,
// pathspecs taken literally, and returns its output.
func (r *Run) gitIn(ctx context.Context, dir, stdin string, env []string, args ...string) (string, error) {
	objs, err := r.repoObjects(ctx)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, SetupTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1",
		"GIT_OBJECT_DIRECTORY="+filepath.Join(r.dir, "objects"), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+objs), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		line, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, line)
	}
	return out.String(), nil
}

// absentDirs lists the folders on the way to rel that do not exist yet,
// innermost first (those a new file's write makes).
func absentDirs(root, rel string) []string {
	var out []string
	for d := filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel))); d != "." && d != "/" && d != ""; d = filepath.ToSlash(filepath.Dir(filepath.FromSlash(d))) {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d))); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// PlanUndo previews an undo: of a pending run, its discard (the user's
// tree is untouched); of an applied one, taking out exactly what the
// apply wrote, three-way, with the paths the user changed since refused
// when their changes overlap.
func (r *Run) PlanUndo(ctx context.Context) (*Plan, error) {
	if r.State == Pending {
		if err := r.Busy("discard"); err != nil {
			return nil, err
		}
		return &Plan{Run: r, Undo: true, Discard: true}, nil
	}
	paths := make([]string, len(r.Wrote))
	for i, w := range r.Wrote {
		paths[i] = w.Path
	}
	cur, err := r.userFiles(ctx, paths, true, nil)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Run: r, Undo: true}
	for _, w := range r.Wrote {
		u := cur[w.Path]
		pp := PathPlan{Path: w.Path, curBlob: u.blob, curMode: u.mode, madeDirs: w.MadeDirs, Status: "M", looked: seen{u.stat, u.diskBlob}}
		if w.BeforeBlob == "" {
			pp.Status = "A"
		}
		switch {
		case u.linked || u.kind != "":
			pp.Conflict = "is no longer a regular file in your tree"
		case u.blob == w.AfterBlob && u.mode == w.AfterMode:
			if w.BeforeBlob == "" {
				pp.Action = ActDelete
			} else {
				pp.Action, pp.blob, pp.mode = ActRestore, w.BeforeBlob, w.BeforeMode
			}
		case u.blob == w.BeforeBlob && (w.BeforeBlob == "" || u.mode == w.BeforeMode):
			pp.Action = ActSame
		case u.blob == "" && u.onDisk:
			pp.Conflict = "ignored by git in your tree now: never touched"
		case u.blob == "":
			pp.Conflict = "you deleted it since the apply"
		case w.BeforeBlob == "":
			pp.Conflict = "you changed it since the apply (a file the apply made: delete it yourself if you want it gone)"
		case u.blob == w.AfterBlob: // only the mode changed since
			pp.Action, pp.blob, pp.mode = ActRestore, w.BeforeBlob, u.mode
		default:
			merged, conflicts, err := r.merge3(ctx, u.blob, w.AfterBlob, w.BeforeBlob)
			switch {
			case err != nil:
				pp.Conflict = err.Error()
			case conflicts > 0:
				pp.Conflict = fmt.Sprintf("you changed it since the apply: %s what the apply wrote", overlaps(conflicts))
			default:
				pp.Action, pp.blob, pp.mode = ActMerge, merged, u.mode
			}
		}
		if pp.Conflict != "" {
			plan.Conflicts++
		}
		plan.Paths = append(plan.Paths, pp)
	}
	return plan, nil
}

// Undo carries out an undo plan: a pending run is discarded; an applied
// one has every path taken out or none. The run's record is removed
// after.
func (r *Run) Undo(ctx context.Context, plan *Plan) error {
	if plan.Discard {
		return r.Discard(ctx)
	}
	if plan.Conflicts > 0 {
		return ErrConflict
	}
	release, err := r.holdFor("undo")
	if err != nil {
		return err
	}
	if err := r.undo(ctx, plan); err != nil {
		release()
		return err
	}
	release() // before the record's folder, the lock's, goes
	return r.remove(ctx)
}

// undo writes an undo plan, the run held.
func (r *Run) undo(ctx context.Context, plan *Plan) error {
	if err := r.recheck(ctx, plan); err != nil {
		return err
	}
	for _, pp := range plan.Paths {
		if pp.Action != ActDelete {
			continue
		}
		// Only a regular file holding what the apply wrote is removed.
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(pp.Path)))
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s", ErrMoved, pp.Path)
		}
	}
	if err := r.checkout(ctx, plan.Paths); err != nil {
		return fmt.Errorf("write your files: %w", err)
	}
	return nil
}
