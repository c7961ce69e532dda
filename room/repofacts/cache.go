// Package repofacts keeps the git facts the room's context panel shows
// before each prompt (the number of changed files, the sizes of the diff
// and the repo map) and refreshes them in the background, one refresh at
// a time, so that a prompt never waits for a walk of a large repository.
package repofacts

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

// Facts are the git facts the context panel shows before each prompt:
// the number of changed files, and the sizes of the diff and the repo map
// (for the budget ratio).
type Facts struct {
	Changed   int // -1 when git could not say
	DiffChars int
	MapChars  int
	At        time.Time     // when the refresh that found them started
	Took      time.Duration // how long it took
}

// Signal is what can be learnt about a repository without walking it:
// the modification times and sizes of the work tree's top folder, the
// index and HEAD, and the last agent run. A change in any of them means
// the facts are surely out of date; an edit deeper in the tree changes
// none of them, which is why facts also expire (Cache.maxAge).
type Signal struct {
	root, index, head [2]int64
	Run               *reports.LastRun // the last agent run
}

// Cache keeps the panel's git facts and refreshes them in the
// background, one refresh at a time: a refresh asked for while one runs is
// coalesced into one more run after it. A prompt never waits for a walk of
// a large repository: it waits (briefly) only when the facts are known to
// be wrong, and otherwise shows the last known value with its age while a
// refresh runs (see get).
type Cache struct {
	root string

	mu      sync.Mutex
	gitDir  string // absolute, found by the first refresh
	facts   Facts
	have    bool
	sig     Signal // at the start of the refresh that found facts
	runSig  Signal // at the start of the running refresh
	running bool
	again   bool
	done    chan struct{} // closed when the running refresh and its re-runs end
	ctx     context.Context
	cancel  context.CancelFunc
	// MinAge is the least time facts are trusted when no signal changed
	// (maxAge); GatherFn does a refresh's work (Gather; tests slow it).
	// Set them before the first Get.
	MinAge    time.Duration
	GatherFn  func(*Signal) Facts
	refreshes int // counted (Refreshes)
	// WaitWrong and CheapRefresh are repoWaitWrong and repoCheapRefresh;
	// tests of what the facts say (not of how long a prompt waits) raise
	// them, so that a loaded machine's slow git does not change the answer.
	WaitWrong, CheapRefresh time.Duration
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

// New is the cache of the repository root's facts ("": none, a read-only
// room outside any repository).
func New(root string) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{root: root, ctx: ctx, cancel: cancel, MinAge: 2 * time.Second, WaitWrong: repoWaitWrong, CheapRefresh: repoCheapRefresh}
	c.GatherFn = c.Gather
	return c
}

// maxAge is how long facts are trusted when no signal changed: at least
// minAge (2 s), and ten times what a refresh costs, so that a large
// repository is not walked back to back.
func (c *Cache) maxAge() time.Duration { return max(c.MinAge, 10*c.facts.Took) }

// Signal stats the cheap signs of change; run is the last agent run.
func (c *Cache) Signal(run *reports.LastRun) Signal {
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
	s := Signal{root: st(c.root), Run: run}
	if gd != "" {
		s.index, s.head = st(filepath.Join(gd, "index")), st(filepath.Join(gd, "HEAD"))
	}
	return s
}

// Get returns the facts for a prompt, whether they are still being
// gathered (none known yet: pending), and whether they are up to date as
// far as the signals tell (fresh; else a refresh is running). When they
// are out of date it starts a refresh (or asks the running one for another
// run) and waits for it as the constants above say; ctx ending stops the
// Wait, not the refresh.
func (c *Cache) Get(ctx context.Context, run *reports.LastRun) (f Facts, pending, fresh bool) {
	sig := c.Signal(run)
	c.mu.Lock()
	wrong := !c.have || sig != c.sig
	stale := wrong || time.Since(c.facts.At) > c.maxAge()
	wait := time.Duration(0)
	if stale {
		if !c.running || c.runSig != sig {
			c.startLocked(sig)
		}
		switch {
		case !c.have || wrong && (c.facts.Took < c.CheapRefresh || sig.Run != c.sig.Run):
			wait = c.WaitWrong
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
	fresh = c.have && c.sig.Run == run && (c.sig == sig || !c.running) && time.Since(c.facts.At) <= c.maxAge()+c.facts.Took
	return c.facts, !c.have, fresh
}

// startLocked starts a refresh, or asks the running one for one more run.
func (c *Cache) startLocked(sig Signal) {
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
			f := c.GatherFn(&sig)
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

// Gather runs the git commands (the walk of the work tree). sig is the
// Signal taken when the refresh was asked for, taken again when the first
// refresh finds the git folder.
func (c *Cache) Gather(sig *Signal) Facts {
	ctx := c.ctx
	start := time.Now()
	if c.root == "" {
		return Facts{Changed: -1, At: start} // a read-only room outside any repository
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
			*sig = c.Signal(sig.Run)
		}
	}
	f := Facts{Changed: -1, At: start}
	if n, err := gitrepo.ChangedCount(ctx, c.root); err == nil {
		f.Changed = n
	}
	f.DiffChars = len(gitrepo.Diff(ctx, c.root))
	f.MapChars = len(gitrepo.Map(ctx, c.root))
	f.Took = time.Since(start)
	return f
}

// Refreshes is how many refreshes ran (tests).
func (c *Cache) Refreshes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refreshes
}

// Wait blocks until no refresh runs (tests, Close).
func (c *Cache) Wait() {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Close stops a running refresh (its git is killed) and waits for it.
func (c *Cache) Close() {
	c.cancel()
	c.Wait()
}
