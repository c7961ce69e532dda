package room

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/panel"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room/chatlane"
	"github.com/relay-baton/relay-baton/room/repofacts"
	"github.com/relay-baton/relay-baton/room/runlock"
	"github.com/relay-baton/relay-baton/room/worktrack"
	"github.com/relay-baton/relay-baton/runs"
	"github.com/relay-baton/relay-baton/workspace"
)

// View is a read-only view of a repository's Agent Room, for a second
// screen (relay-baton serve): the context panel's facts, rebuilt from
// .ai-session/conversation.jsonl the way a resume rebuilds them (active
// agent, orchestrator target, last run) plus the files the terminal panel
// reads (plan.md, the budget, git). It creates and writes nothing, and it
// reads the log incrementally: each Panel call reads only the events
// appended since the last one.
type View struct {
	Root string
	Diet string
	now  func() time.Time

	mu     sync.Mutex
	r      *resume.Reader
	offset int64
	ino    os.FileInfo
	repo   *repofacts.Cache // the panel's git facts, kept between calls (package repofacts)
}

// OpenView opens the view of the repository containing dir. profile is the
// profile the budget ratio is computed for ("" = the default).
func OpenView(dir, profile string) (*View, error) {
	root, err := workspace.FindRoot(dir)
	if err != nil {
		return nil, err
	}
	if profile == "" {
		profile = diet.Default
	}
	if _, ok := diet.Profiles[profile]; !ok {
		return nil, fmt.Errorf("unknown diet profile %q", profile)
	}
	v := &View{Root: root, Diet: profile, now: time.Now, repo: repofacts.New(root)}
	v.reset()
	return v, nil
}

// LogPath is the conversation log the view reads.
func (v *View) LogPath() string { return workspace.LogPath(v.Root) }

// SessionDir is the repository's .ai-session folder (it may not exist).
func (v *View) SessionDir() string { return workspace.SessionDir(v.Root) }

func (v *View) reset() {
	v.r = resume.NewReader()
	v.offset, v.ino = 0, nil
}

// catchUp reads the events appended since the last call (from the top
// again when the log was truncated or replaced).
func (v *View) catchUp() error {
	p := v.LogPath()
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			v.reset()
			return nil
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if fi.Size() < v.offset || (v.ino != nil && !os.SameFile(v.ino, fi)) {
		v.reset()
	}
	v.ino = fi
	if fi.Size() == v.offset {
		return nil
	}
	_, off, err := events.ReadFileFrom(p, v.offset, true, v.r.Take)
	v.offset = off
	if err != nil && !errors.Is(err, events.ErrNoLog) {
		return err
	}
	return nil
}

// state catches up with the log and returns what the panel needs of it
// (the costs copied: the reader goes on adding to its own). The lock is
// released however catching up ends (a panic in a reader must not leave
// every later call waiting).
func (v *View) state() (active, target string, last *reports.LastRun, costs resume.Costs, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	err = v.catchUp()
	rs := v.r.State()
	costs = rs.Costs
	costs.Latest = slices.Clone(costs.Latest)
	costs.ByAgent = maps.Clone(costs.ByAgent)
	return rs.Active, rs.Target, rs.LastRun, costs, err
}

// conversations are the agents' conversations the log records now (a
// copy).
func (v *View) conversations() map[string]resume.Conversation {
	v.mu.Lock()
	defer v.mu.Unlock()
	_ = v.catchUp()
	return maps.Clone(v.r.State().Conversations)
}

// Panel returns the context panel's facts as the room would show them,
// computed by the same code (Engine.Panel) on the state the log describes.
func (v *View) Panel(ctx context.Context) (panel.Facts, error) {
	p, err := v.Page(ctx)
	return p.Facts, err
}

// Page is the page's context (GET /api/context, and the room stream's
// context events): the panel's facts, the pending run's worktree, and
// what each run the log records cost with the log's total (the numbers
// /costs shows after a resume, read by the same code).
type Page struct {
	panel.Facts
	// PendingWorktree is the pending run's worktree folder ("" when none).
	PendingWorktree string    `json:"pendingRunWorktree,omitempty"`
	Costs           PageCosts `json:"costs"`
}

// PageCosts are the log's agent runs and what they cost: the latest
// resume.LatestCosts one by one, with Earlier the ones not listed.
type PageCosts struct {
	Runs    int           `json:"runs"`
	Total   events.Usage  `json:"total"`
	Earlier int           `json:"earlier,omitempty"`
	Latest  []PageRunCost `json:"latest,omitempty"`
	// Text is the total in words, as /budget and /costs say it.
	Text string `json:"text"`
}

// PageRunCost is one run and its own usage; Text is /costs's line.
type PageRunCost struct {
	Agent   string       `json:"agent"`
	Command string       `json:"command"`
	At      time.Time    `json:"at"`
	Usage   events.Usage `json:"usage"`
	Text    string       `json:"text"`
}

func pageCosts(c resume.Costs) PageCosts {
	s := Spent{Costs: c}
	out := PageCosts{Runs: c.Runs, Total: c.Total, Earlier: c.Earlier(), Text: s.totalWords()}
	for i, r := range c.Latest {
		out.Latest = append(out.Latest, PageRunCost{Agent: r.Agent, Command: r.Command, At: r.At, Usage: r.Usage, Text: costLine(out.Earlier+i+1, r)})
	}
	return out
}

// Page returns the page's context: the panel's facts as the room would
// show them, computed by the same code (Engine.Panel) on the state the
// log describes, with the log's costs as a resumed room counts them.
func (v *View) Page(ctx context.Context) (Page, error) {
	active, target, last, costs, err := v.state()
	if active == "" {
		active = agents.Claude
	}
	e := &Engine{
		Root: v.Root, SessionDir: v.SessionDir(), Active: active, Diet: v.Diet,
		Planner: agents.Claude, Executor: agents.Codex, Reviewer: agents.Claude,
		last: last, now: v.now, getenv: os.Getenv, repo: v.repo, chat: &chatlane.Lane{}, lock: runlock.New(v.Root, "", false, nil, nil),
		planMD: planDoc{dir: v.SessionDir(), now: v.now},
		wt:     worktrack.New(worktrack.Deps{Root: v.Root, ReadOnly: true, Now: v.now}),
	}
	if active == AgentOrchestrator {
		if target == "" { // following the lead: whichever session it is now
			if ws, err := workspace.Resolve(v.Root); err == nil {
				if t, err := conversation.Lead(ws); err == nil {
					target = t.SessionID
				}
			}
		}
		e.chat.Session = target
	} else {
		e.cont.target = target
	}
	e.spent = Spent{Costs: costs, FromLog: costs.Runs}
	var worktree string
	if r := runs.Latest(v.Root, runs.Pending); r != nil { // the pending run, as its record last counted it
		e.wt.Show(r, r.Files)
		worktree = r.Worktree
	}
	return Page{Facts: e.Panel(ctx), PendingWorktree: worktree, Costs: pageCosts(costs)}, err
}
