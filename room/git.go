package room

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// excludeSession keeps relay-baton's own folder out of every git view: plan.md
// and conversation.jsonl change on every turn and are not progress.
const excludeSession = ":(exclude).ai-session"

// excludeChat does the same for the session-chat protocol's files (inbox,
// delivered, log.jsonl, locks), which change whenever a message moves.
const excludeChat = ":(exclude).claude/session-chat"

// git runs git in root with argv (no shell) and returns stdout.
func git(ctx context.Context, root string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	// relay-baton only reads: no index refresh under index.lock, so a
	// cancelled query (the context panel's, when a line is entered) never
	// leaves a stale lock nor contends with an agent's git.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil { // the cause, not "signal: killed"
			err = ctxErr
		}
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// head returns HEAD's commit id, or "" in a repository without commits.
func head(ctx context.Context, root string) string {
	s, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// Change is one changed path in the working tree.
type Change struct {
	Status  string `json:"status"` // porcelain XY, e.g. " M", "D ", "??"
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
}

// IsDeleted reports whether the path was removed.
func (c Change) IsDeleted() bool { return strings.Contains(c.Status, "D") }

// changes lists the working tree's changes against HEAD (excluding
// .ai-session), with line counts for tracked files.
func changes(ctx context.Context, root string) ([]Change, error) {
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return nil, err
	}
	var list []Change
	fields := strings.Split(st, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		c := Change{Status: f[:2], Path: f[3:]}
		if c.Status[0] == 'R' || c.Status[0] == 'C' {
			i++ // the source path follows a rename
		}
		list = append(list, c)
	}
	if head(ctx, root) != "" {
		ns, err := git(ctx, root, "diff", "HEAD", "--numstat", "-z", "--no-renames", "--", ".", excludeSession, excludeChat)
		if err == nil {
			counts := map[string][2]int{}
			for _, rec := range strings.Split(ns, "\x00") {
				parts := strings.SplitN(rec, "\t", 3)
				if len(parts) != 3 {
					continue
				}
				a, _ := strconv.Atoi(parts[0])
				d, _ := strconv.Atoi(parts[1])
				counts[parts[2]] = [2]int{a, d}
			}
			for i := range list {
				if n, ok := counts[list[i].Path]; ok {
					list[i].Added, list[i].Deleted = n[0], n[1]
				}
			}
		}
	}
	for i := range list {
		if list[i].Status == "??" {
			list[i].Added = countLines(filepath.Join(root, list[i].Path))
		}
	}
	return list, nil
}

// openUntracked opens an untracked file of the working tree for reading
// through the one helper: a symlink is not followed (its target may lie
// outside the repository, and a key must not end up in a prompt), a FIFO
// does not block, only a regular file is read.
func openUntracked(path string) (*os.File, error) { return events.OpenOwned(path) }

// untrackedKind names what an untracked path that is not a regular file
// is ("a symbolic link", ...), for the diff.
func untrackedKind(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "gone"
	}
	return events.FileKind(fi.Mode())
}

func countLines(path string) int {
	f, err := openUntracked(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 8<<20))
	return bytes.Count(b, []byte("\n"))
}

// maxNewFileDiff caps how much of one untracked file diffText includes.
const maxNewFileDiff = 256 << 10

// diffText is the working tree's diff against HEAD (excluding
// .ai-session), followed by untracked text files as new-file diffs.
func diffText(ctx context.Context, root string) string {
	var s string
	if head(ctx, root) == "" {
		s, _ = git(ctx, root, "diff", "--cached", "--", ".", excludeSession, excludeChat)
	} else {
		s, _ = git(ctx, root, "diff", "HEAD", "--", ".", excludeSession, excludeChat)
	}
	var b strings.Builder
	b.WriteString(s)
	un, _ := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		f, err := openUntracked(filepath.Join(root, p))
		if errors.Is(err, events.ErrNotRegular) {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file (%s, not read)\n", p, p, untrackedKind(filepath.Join(root, p)))
			continue
		}
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(f, maxNewFileDiff))
		f.Close()
		if bytes.IndexByte(data, 0) >= 0 {
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file (binary)\n", p, p)
			continue
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file\n--- /dev/null\n+++ b/%s\n", p, p, p)
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if l != "" {
				b.WriteString("+" + l)
			}
		}
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// progressKey hashes the repository state an executor step can change:
// HEAD, the porcelain status, the diff against HEAD, and the content of
// untracked files. Two equal keys mean a step made no progress.
func progressKey(ctx context.Context, root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, head(ctx, root))
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return "", err
	}
	io.WriteString(h, st)
	io.WriteString(h, diffText(ctx, root))
	un, _ := git(ctx, root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", excludeSession, excludeChat)
	for i, p := range strings.Split(un, "\x00") {
		if p == "" || i > 2000 {
			continue
		}
		full := filepath.Join(root, p)
		if f, err := openUntracked(full); err == nil {
			fmt.Fprintf(h, "\x00%s\x00", p)
			io.Copy(h, io.LimitReader(f, 16<<20))
			f.Close()
		} else if errors.Is(err, events.ErrNotRegular) {
			target, _ := os.Readlink(full) // a link moved elsewhere is progress
			fmt.Fprintf(h, "\x00%s\x00%s\x00%s", p, untrackedKind(full), target)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// repoMap lists tracked and untracked files, one a line.
func repoMap(ctx context.Context, root string) string {
	s, _ := git(ctx, root, "ls-files", "--cached", "--others", "--exclude-standard", "--", ".", excludeSession, excludeChat)
	return s
}

// changedCount is len(changes(ctx, root)) without the line counts: one
// git status.
func changedCount(ctx context.Context, root string) (int, error) {
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", excludeSession, excludeChat)
	if err != nil {
		return 0, err
	}
	n := 0
	fields := strings.Split(st, "\x00")
	for i := 0; i < len(fields); i++ {
		if f := fields[i]; len(f) >= 4 {
			n++
			if f[0] == 'R' || f[0] == 'C' {
				i++ // the source path follows a rename
			}
		}
	}
	return n, nil
}

// repoFacts are the git facts the context panel shows before each prompt:
// the number of changed files, and the sizes of the diff and the repo map
// (for the budget ratio).
type repoFacts struct {
	changed   int // -1 when git could not say
	diffChars int
	mapChars  int
	at        time.Time     // when the refresh that found them started
	took      time.Duration // how long it took
}

// repoSignal is what can be learnt about a repository without walking it:
// the modification times and sizes of the work tree's top folder, the
// index and HEAD, and the last agent run. A change in any of them means
// the facts are surely out of date; an edit deeper in the tree changes
// none of them, which is why facts also expire (repoCache.maxAge).
type repoSignal struct {
	root, index, head [2]int64
	run               *LastRun
}

// repoCache keeps the panel's git facts and refreshes them in the
// background, one refresh at a time: a refresh asked for while one runs is
// coalesced into one more run after it. A prompt never waits for a walk of
// a large repository: it waits (briefly) only when the facts are known to
// be wrong, and otherwise shows the last known value with its age while a
// refresh runs (see get).
type repoCache struct {
	root string

	mu      sync.Mutex
	gitDir  string // absolute, found by the first refresh
	facts   repoFacts
	have    bool
	sig     repoSignal // at the start of the refresh that found facts
	runSig  repoSignal // at the start of the running refresh
	running bool
	again   bool
	done    chan struct{} // closed when the running refresh and its re-runs end
	ctx     context.Context
	cancel  context.CancelFunc
	// minAge is the least time facts are trusted when no signal changed
	// (maxAge); gatherFn does a refresh's work (gather; tests slow it).
	minAge    time.Duration
	gatherFn  func(*repoSignal) repoFacts
	refreshes int // counted (tests)
	// waitWrong and cheapRefresh are repoWaitWrong and repoCheapRefresh;
	// tests of what the facts say (not of how long a prompt waits) raise
	// them, so that a loaded machine's slow git does not change the answer.
	waitWrong, cheapRefresh time.Duration
}

// Bounds of how long a prompt waits for a refresh.
const (
	// repoWaitStale: the facts only expired (nothing says they are wrong).
	repoWaitStale = 25 * time.Millisecond
	// repoWaitWrong: something changed (an agent ran, HEAD, the index or
	// the top folder moved) and refreshing is cheap here; or an agent
	// ran; or there are no facts yet.
	repoWaitWrong = 3 * time.Second
	// repoCheapRefresh: a refresh that took less is cheap (waited for when
	// the facts are wrong); a dearer one is waited for only after an
	// agent run, else for repoWaitDear, and its old value shown with its age.
	repoCheapRefresh = 250 * time.Millisecond
	repoWaitDear     = 30 * time.Millisecond
)

func newRepoCache(root string) *repoCache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &repoCache{root: root, ctx: ctx, cancel: cancel, minAge: 2 * time.Second, waitWrong: repoWaitWrong, cheapRefresh: repoCheapRefresh}
	c.gatherFn = c.gather
	return c
}

// maxAge is how long facts are trusted when no signal changed: at least
// minAge (2 s), and ten times what a refresh costs, so that a large
// repository is not walked back to back.
func (c *repoCache) maxAge() time.Duration { return max(c.minAge, 10*c.facts.took) }

// signal stats the cheap signs of change.
func (c *repoCache) signal(run *LastRun) repoSignal {
	st := func(p string) [2]int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return [2]int64{-1, -1}
		}
		return [2]int64{fi.ModTime().UnixNano(), fi.Size()}
	}
	c.mu.Lock()
	gd := c.gitDir
	c.mu.Unlock()
	s := repoSignal{root: st(c.root), run: run}
	if gd != "" {
		s.index, s.head = st(filepath.Join(gd, "index")), st(filepath.Join(gd, "HEAD"))
	}
	return s
}

// get returns the facts for a prompt, whether they are still being
// gathered (none known yet: pending), and whether they are up to date as
// far as the signals tell (fresh; else a refresh is running). When they
// are out of date it starts a refresh (or asks the running one for another
// run) and waits for it as the constants above say; ctx ending stops the
// wait, not the refresh.
func (c *repoCache) get(ctx context.Context, run *LastRun) (f repoFacts, pending, fresh bool) {
	sig := c.signal(run)
	c.mu.Lock()
	wrong := !c.have || sig != c.sig
	stale := wrong || time.Since(c.facts.at) > c.maxAge()
	wait := time.Duration(0)
	if stale {
		if !c.running || c.runSig != sig {
			c.startLocked(sig)
		}
		switch {
		case !c.have || wrong && (c.facts.took < c.cheapRefresh || sig.run != c.sig.run):
			wait = c.waitWrong
		case wrong:
			wait = repoWaitDear
		default:
			wait = repoWaitStale
		}
	}
	done := c.done
	c.mu.Unlock()
	if stale && done != nil {
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh = c.have && c.sig.run == run && (c.sig == sig || !c.running) && time.Since(c.facts.at) <= c.maxAge()+c.facts.took
	return c.facts, !c.have, fresh
}

// startLocked starts a refresh, or asks the running one for one more run.
func (c *repoCache) startLocked(sig repoSignal) {
	c.runSig = sig
	if c.running {
		c.again = true
		return
	}
	if c.ctx.Err() != nil {
		return // closed
	}
	c.running = true
	done := make(chan struct{})
	c.done = done
	go func() {
		defer close(done)
		for {
			c.mu.Lock()
			sig := c.runSig
			c.again = false
			c.mu.Unlock()
			f := c.gatherFn(&sig)
			c.mu.Lock()
			if c.ctx.Err() == nil {
				c.facts, c.have, c.sig = f, true, sig
			}
			c.refreshes++
			if !c.again || c.ctx.Err() != nil {
				c.running = false
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
		}
	}()
}

// gather runs the git commands (the walk of the work tree). sig is the
// signal taken when the refresh was asked for, taken again when the first
// refresh finds the git folder.
func (c *repoCache) gather(sig *repoSignal) repoFacts {
	ctx := c.ctx
	start := time.Now()
	if c.root == "" {
		return repoFacts{changed: -1, at: start} // a read-only room outside any repository
	}
	c.mu.Lock()
	gd := c.gitDir
	c.mu.Unlock()
	if gd == "" {
		if s, err := git(ctx, c.root, "rev-parse", "--absolute-git-dir"); err == nil {
			c.mu.Lock()
			c.gitDir = strings.TrimSpace(s)
			c.mu.Unlock()
			// The signal taken without the git folder lacked the index
			// and HEAD: take it again, before the walk.
			*sig = c.signal(sig.run)
		}
	}
	f := repoFacts{changed: -1, at: start}
	if n, err := changedCount(ctx, c.root); err == nil {
		f.changed = n
	}
	f.diffChars = len(diffText(ctx, c.root))
	f.mapChars = len(repoMap(ctx, c.root))
	f.took = time.Since(start)
	return f
}

// wait blocks until no refresh runs (tests, close).
func (c *repoCache) wait() {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// close stops a running refresh (its git is killed) and waits for it.
func (c *repoCache) close() {
	c.cancel()
	c.wait()
}
