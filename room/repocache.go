package room

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/reports"
)

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
	run               *reports.LastRun
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
func (c *repoCache) signal(run *reports.LastRun) repoSignal {
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
func (c *repoCache) get(ctx context.Context, run *reports.LastRun) (f repoFacts, pending, fresh bool) {
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
		if s, err := gitrepo.Run(ctx, c.root, "rev-parse", "--absolute-git-dir"); err == nil {
			c.mu.Lock()
			c.gitDir = strings.TrimSpace(s)
			c.mu.Unlock()
			// The signal taken without the git folder lacked the index
			// and HEAD: take it again, before the walk.
			*sig = c.signal(sig.run)
		}
	}
	f := repoFacts{changed: -1, at: start}
	if n, err := gitrepo.ChangedCount(ctx, c.root); err == nil {
		f.changed = n
	}
	f.diffChars = len(gitrepo.Diff(ctx, c.root))
	f.mapChars = len(gitrepo.Map(ctx, c.root))
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
