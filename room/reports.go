package room

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/runs"
)

// The room's side of its reports (package reports): it gathers what only
// it knows, hands it over, and logs the event.

// Status gathers the session status and logs a status event.
func (e *Engine) Status(ctx context.Context) reports.SessionStatus {
	s := reports.SessionStatus{Root: e.Root, SessionID: e.statusSession(), Active: e.Active, Head: gitrepo.Head(ctx, e.Root), LastRun: e.last, Diet: e.Diet, ChangedFiles: []string{}}
	if s.LastRun == nil {
		// Nothing ran in this process (a one-shot status, a room just
		// opened): the log's last run, marked as such.
		if rs, err := resume.Read(e.LogPath(), 1); err == nil && rs.LastRun != nil {
			l := *rs.LastRun
			l.FromLog = true
			s.LastRun = &l
		}
	}
	if age, ok := e.planMD.age(); ok {
		s.Plan, s.PlanAgeSec = true, int64(age/time.Second)
	}
	if _, err := e.planMD.read(); err != nil && !errors.Is(err, ErrNoPlan) {
		s.Plan, s.PlanAgeSec, s.PlanError = false, 0, err.Error()
	}
	if ch, err := gitrepo.Changes(ctx, e.Root); err == nil {
		for _, c := range ch {
			s.ChangedFiles = append(s.ChangedFiles, strings.TrimSpace(c.Status)+" "+c.Path)
		}
	}
	r := e.wt.Pending()
	if r == nil && e.Root != "" && !e.wt.InPlace() {
		r = runs.Latest(e.Root, runs.Pending)
	}
	if r != nil {
		p := &reports.PendingRun{ID: r.ID, Worktree: r.Worktree}
		if ch, _, err := r.Changes(ctx); err == nil {
			p.Files = len(ch)
			for _, c := range ch {
				p.Added, p.Deleted = p.Added+c.Added, p.Deleted+c.Deleted
			}
		}
		s.PendingRun = p
	}
	e.emit(events.RoleRelayBaton, fmt.Sprintf("agent %s, plan %s, %s", s.Active, s.PlanWord(), render.Count(len(s.ChangedFiles), "changed file")), nil,
		events.StatusMeta{Agent: s.Active, ChangedFiles: events.Int(len(s.ChangedFiles)), Plan: events.Bool(s.Plan)})
	return s
}

// statusSession is the room session a status names: this room's own when
// it records to the log, else (a one-shot status) the session of the log's
// newest event, "" when the log has none. It never makes one up.
func (e *Engine) statusSession() string {
	if e.log != nil {
		return e.SessionID
	}
	pg, err := events.ReadBack(e.LogPath(), -1, 1, nil)
	if err != nil || len(pg.Events) == 0 {
		return ""
	}
	return pg.Events[0].Event.SessionID
}

// Review compares the working tree's changes with plan.md (reports.NewReview),
// writes review.md unless the room is read-only, and logs a review event.
func (e *Engine) Review(ctx context.Context) (reports.Review, error) {
	plan, err := e.planMD.read()
	p := reports.Plan{Text: plan, Ready: err == nil}
	if err != nil && !errors.Is(err, ErrNoPlan) {
		p.Error = err.Error()
	}
	r, err := reports.NewReview(ctx, e.wt.WorkDir(), p)
	if err != nil {
		return r, err
	}
	refs := map[string]string{}
	if e.ReadOnly() {
		// `relay-baton review` reports only.
	} else if err := writeFileAtomic(filepath.Join(e.SessionDir, events.ReviewFile), []byte(r.Text())); err == nil {
		refs[events.RefReview] = events.ReviewFile
	}
	e.emit(events.RoleRelayBaton, strings.TrimPrefix(r.SummaryLine(), "review: "), refs, events.ReviewMeta{
		ChangedFiles: events.Int(len(r.Changed)), Deletions: events.Int(len(r.Deletions)), LargeDiffs: events.Int(len(r.LargeDiffs)),
		LikelySecrets: events.Int(len(r.Secrets)), TestsTouched: events.Int(len(r.TestsTouched)), NotInPlan: events.Int(len(r.NotInPlan)), Deterministic: true,
	})
	return r, nil
}

// AgentReview asks the reviewer (claude) for a review, previewed.
func (e *Engine) AgentReview(ctx context.Context) error {
	plan, _ := e.planMD.read()
	ch, err := gitrepo.Changes(ctx, e.wt.WorkDir())
	if err != nil {
		return err
	}
	var files strings.Builder
	for _, c := range ch {
		fmt.Fprintf(&files, "%s %s (+%d -%d)\n", strings.TrimSpace(c.Status), c.Path, c.Added, c.Deleted)
	}
	diff := gitrepo.Diff(ctx, e.wt.WorkDir())
	if lim := diet.Profiles[e.Diet].Diff; len(diff) > lim {
		diff = diff[:lim] + "\n… (diff truncated to the diet budget)"
	}
	spec := runSpec{Command: "review", Req: e.request(e.Reviewer, agents.RoleReviewer, prompts.Review(prompts.ReviewInput{Plan: plan, ChangedFiles: files.String(), Diff: diff}))}
	res, err := e.runOnce(ctx, spec)
	if res.Agent == "" {
		return err
	}
	refs := map[string]string{}
	if strings.TrimSpace(res.FinalText) != "" {
		if werr := writeFileAtomic(filepath.Join(e.SessionDir, events.ReviewFile), []byte(res.FinalText+"\n")); werr == nil {
			refs[events.RefReview] = events.ReviewFile
		}
	}
	e.emit(events.Role(res.Agent), fmt.Sprintf("by %s: exit %d; %s", res.Agent, res.ExitCode, summary(res.FinalText, 300)), refs,
		events.ReviewMeta{Agent: res.Agent, ExitCode: events.Int(res.ExitCode), Deterministic: false})
	return err
}

// Doctor checks the environment (reports.RunDoctor) and logs a diagnose
// event.
func (e *Engine) Doctor(ctx context.Context, deep bool) reports.Doctor {
	r := reports.RunDoctor(ctx, reports.Facts{
		Root: e.Root, SessionDir: e.SessionDir, LogPath: e.LogPath(), ReadOnly: e.ReadOnly(),
		AllowAPIKeyEnv: e.allow, Getenv: e.getenv, Agents: e.runner, CanWrite: canWrite,
	}, deep)
	kind := "doctor"
	if deep {
		kind = "doctor --deep"
	}
	fails, warns := r.Tally()
	e.emit(events.RoleRelayBaton, fmt.Sprintf("%s: %s, %d failed, %s", kind, render.Count(len(r.Checks), "check"), fails, render.Count(warns, "warning")), nil,
		events.DiagnoseMeta{Deep: deep, Failed: fails, Warnings: warns})
	return r
}

// lazyRE compiles expr on first use: relay-baton's start-up (a hook run
// at every turn of a Claude Code session among them) compiles nothing it
// does not use.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
