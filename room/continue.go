package room

// /continue: the bounded plan<->execute loop. Each step
// has two halves: the executor works on the plan's next step, then the
// planner reads that step's outcome (the executor's answer, the diff since
// the step began, the files it changed) and rewrites plan.md, or declares
// the plan complete. One confirmation covers the whole loop; every agent
// prompt is still previewed and logged before its run, and every run goes
// through the same single-run path (request, preview, execute) as /plan and
// /execute.

import (
	"context"
	"errors"
	"fmt"
	"github.com/relay-baton/relay-baton/room/runlock"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room/worktrack"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/safeio"
)

// LoopResult is what a /continue loop did.
type LoopResult struct {
	Steps       int               `json:"steps"`
	Max         int               `json:"maxSteps"`
	Reason      resume.StopReason `json:"reason"`
	Detail      string            `json:"detail"`
	Half        string            `json:"half,omitempty"` // the half of the last step that ran (execute or plan)
	AgentRuns   int               `json:"agentRuns"`
	PlanUpdates int               `json:"planUpdates"` // plan.md rewrites by the planner
}

// loopStart is where a loop begins: step 1's executor half for a new loop,
// or the half of the step a resumed loop stopped at.
type loopStart struct {
	Step     int
	Half     string // resume.HalfExecute or resume.HalfPlan
	Previous string // the previous outcome, for the next executor's prompt (with resume.HalfPlan: Step's own)
	Answer   string // with resume.HalfPlan: Step's executor answer, as logged
}

// Continue runs the bounded plan<->execute loop: one confirmation, a
// baseline before step 1, then up to max steps of executor then planner
// (no planner after the last step).
func (e *Engine) Continue(ctx context.Context, max int) (LoopResult, error) {
	return newLoop(e).continueLoop(ctx, loopStart{Step: 1, Half: resume.HalfExecute}, max)
}

// loop is one /continue loop: the bounded plan<->execute loop over the
// engine's single-run path (its stepper), the executor working where the
// work tracker says.
type loop struct {
	run    stepper
	runner Runner
	wt     *worktrack.Tracker
	root   string
	plan   planDoc
	// sessionDir is .ai-session, where a replaced plan is backed up.
	sessionDir              string
	planner, executor, diet string
	now                     func() time.Time
	lock                    *runlock.Lock
	pv                      *previews
	runStart                *string // the tree the last executor run started from (the engine's)
}

// stepper is what a loop asks of the engine: its single-run path
// (request and execute; the previews are pv's), the plan, the budget,
// its writer and its log.
type stepper interface {
	request(agent string, role agents.Role, prompt string) agents.Request
	execute(ctx context.Context, spec runSpec, inv agents.Invocation) agents.Result
	Budget(ctx context.Context) diet.Report
	Say(format string, a ...any)
	emit(role events.Role, text string, refs map[string]string, meta events.Meta) string
}

// newLoop is a loop driven by e, with e's agents and diet as they are now.
func newLoop(e *Engine) *loop {
	return &loop{run: e, runner: e.runner, wt: e.wt, root: e.Root, plan: e.planMD, sessionDir: e.SessionDir,
		planner: e.Planner, executor: e.Executor, diet: e.Diet, now: e.now, lock: e.lock, pv: e.pv, runStart: &e.runStart}
}

// loopShape describes the runs a loop from at to max may make, for the
// preview: the order of agents per step and the most runs in all.
func loopShape(at loopStart, max int, executor, planner string) (order string, runs, execRuns, planRuns int) {
	var groups []string
	full := at.Step
	if at.Half == resume.HalfPlan {
		groups = append(groups, fmt.Sprintf("step %d: %s (planner) updates plan.md from the step's answer and diff", at.Step, planner))
		planRuns++
		full++
	}
	both := fmt.Sprintf("%s (executor) works on the plan's next step, then %s (planner) updates plan.md from its answer and diff", executor, planner)
	switch {
	case full == max-1:
		groups = append(groups, fmt.Sprintf("step %d: %s", full, both))
	case full < max-1:
		groups = append(groups, fmt.Sprintf("steps %d-%d: %s", full, max-1, both))
	}
	if full < max {
		execRuns += max - full
		planRuns += max - full
	}
	if full <= max {
		groups = append(groups, fmt.Sprintf("step %d: %s only (the last step: no plan update after it)", max, executor))
		execRuns++
	}
	return strings.Join(groups, "\n           "), execRuns + planRuns, execRuns, planRuns
}

func (l *loop) loopNote(at loopStart, max int) string {
	order, runs, xr, pr := loopShape(at, max, l.executor, l.planner)
	var b strings.Builder
	fmt.Fprintf(&b, "loop:    up to %s, at most %s (%d %s, %d %s); this one confirmation covers them all\n", render.Count(max, "step"), render.Count(runs, "agent run"), xr, l.executor, pr, l.planner)
	fmt.Fprintf(&b, "  order:   %s\n", order)
	fmt.Fprintf(&b, "  stops:   when %s ends its answer with the line %s, a step leaves the repository unchanged,\n", l.planner, prompts.PlanCompleteMarker)
	fmt.Fprintf(&b, "           budget >= %.2f, an agent fails, or Ctrl-C; every later prompt is previewed and logged before it runs", diet.Ceiling)
	if at.Step > 1 || at.Half == resume.HalfPlan {
		which := ""
		if at.Half == resume.HalfPlan {
			which = fmt.Sprintf(" (%s's plan update)", l.planner)
		}
		fmt.Fprintf(&b, "\n  resume:  continues an unfinished loop at step %d of %d%s", at.Step, max, which)
	}
	return b.String()
}

// continueLoop runs the loop from at (a resumed loop starts past step 1's
// executor half).
func (l *loop) continueLoop(ctx context.Context, at loopStart, max int) (LoopResult, error) {
	lr := LoopResult{Max: max}
	if at.Half != resume.HalfPlan {
		at.Half = resume.HalfExecute
	}
	if _, err := l.plan.read(); err != nil {
		return lr, err
	}
	bg := context.WithoutCancel(ctx)
	snaps := l.wt.Snapshots(bg) // nil: no step diffs (the working tree's diff instead)
	step, half, prev, answer := at.Step, at.Half, at.Previous, at.Answer
	startTree := "" // the repository's tree when the current step began ("" = unknown)

	spec, err := l.loopSpec(bg, step, half, max, prev, answer, snaps, startTree)
	if err != nil {
		return lr, err
	}
	spec.Note = l.loopNote(at, max)
	inv, err := l.pv.confirm(ctx, &spec)
	if err != nil {
		lr.Reason, lr.Detail = resume.StopFailure, err.Error()
		if errors.Is(err, ErrDeclined) || errors.Is(err, ErrNeedYes) {
			lr.Reason = resume.StopDeclined
		}
		return lr, err
	}
	// The loop holds the repository's run lock from its yes to its end:
	// no other screen's run slips in between its steps.
	release, err := l.lock.Hold(spec.Req.Agent, "continue")
	if err != nil {
		l.run.Say("%v", err)
		lr.Reason, lr.Detail = resume.StopFailure, err.Error()
		return lr, err
	}
	defer release()
	baseline, err := gitrepo.ProgressKey(bg, l.root)
	if err != nil {
		return lr, fmt.Errorf("baseline before step %d: %w", step, err)
	}
	prevKey := baseline
	finish := func(r resume.StopReason, detail string) (LoopResult, error) { return l.stopLoop(lr, max, r, detail) }
	for first := true; ; first = false {
		if !first {
			var stop resume.StopReason
			var detail string
			if spec, inv, stop, detail = l.nextHalf(ctx, step, half, max, prev, answer, snaps, startTree); stop != "" {
				lr.Steps, lr.Half = step, half
				return finish(stop, detail)
			}
		}
		lr.Steps, lr.Half = step, half
		if half == resume.HalfExecute {
			l.run.Say("step %d of %d: %s works on the plan's next step", step, max, spec.Req.Agent)
			res := l.run.execute(ctx, spec, inv)
			startTree = *l.runStart // recorded by execute before the run
			lr.AgentRuns++
			changed := l.wt.ChangedFiles(bg)
			l.run.emit(events.Role(res.Agent), fmt.Sprintf("continue step %d/%d by %s: exit %d, %s; %s", step, max, res.Agent, res.ExitCode, render.Count(changed, "changed file"), summary(res.FinalText, 300)),
				map[string]string{events.RefPlan: events.PlanFile}, events.ExecuteMeta{Agent: res.Agent, Step: step, MaxSteps: max, Half: resume.HalfExecute,
					ExitCode: events.Int(res.ExitCode), ChangedFiles: events.Int(changed), Answer: summary(res.FinalText, 1500)})
			switch {
			case res.Cancelled || ctx.Err() != nil:
				return finish(resume.StopCancelled, fmt.Sprintf("step %d was cancelled", step))
			case resultErr(res) != nil:
				return finish(resume.StopFailure, fmt.Sprintf("step %d: %v", step, resultErr(res)))
			}
			var key string
			if r := l.wt.Pending(); r != nil && startTree != "" {
				// In the run's worktree: its tree before and after the step.
				prevKey = startTree
				key, err = r.Snapshot(bg)
			} else {
				key, err = gitrepo.ProgressKey(bg, l.root)
			}
			if err != nil {
				return finish(resume.StopFailure, fmt.Sprintf("cannot read the repository state after step %d: %v", step, err))
			}
			if key == prevKey {
				return finish(resume.StopNoProgress, fmt.Sprintf("the repository did not change in step %d", step))
			}
			prevKey = key
			if b := l.run.Budget(bg); b.Ratio >= diet.Ceiling {
				return finish(resume.StopBudget, fmt.Sprintf("budget ratio %.2f is at or over the ceiling %.2f (diet %s)", b.Ratio, diet.Ceiling, l.diet))
			}
			if step >= max {
				return finish(resume.StopMaxSteps, fmt.Sprintf("reached --max-steps %d", max))
			}
			answer = res.FinalText
			prev = fmt.Sprintf("step %d: exit %d; %s. Its answer:\n%s", step, res.ExitCode, render.Count(changed, "changed file"), summary(res.FinalText, 3000))
			half = resume.HalfPlan
			continue
		}

		// The planner's half: it rewrites plan.md from the step's outcome.
		l.run.Say("step %d of %d: %s updates the plan from the step's outcome", step, max, spec.Req.Agent)
		res := l.run.execute(ctx, spec, inv)
		lr.AgentRuns++
		switch {
		case res.Cancelled || ctx.Err() != nil:
			return finish(resume.StopCancelled, fmt.Sprintf("the plan update of step %d was cancelled", step))
		case resultErr(res) != nil:
			return finish(resume.StopFailure, fmt.Sprintf("the plan update of step %d: %v", step, resultErr(res)))
		}
		wrote, complete, err := l.applyPlanUpdate(step, max, res)
		if wrote {
			lr.PlanUpdates++
		}
		if err != nil {
			return finish(resume.StopFailure, err.Error())
		}
		if complete {
			return finish(resume.StopComplete, fmt.Sprintf("%s declared the plan complete after step %d", res.Agent, step))
		}
		step, half, answer, startTree = step+1, resume.HalfExecute, "", ""
	}
}

// nextHalf builds the run of a later half of the loop (step's half) and
// previews it, covered by the loop's one confirmation; stop and detail
// say why it could not start (Ctrl-C before it, or a failure).
func (l *loop) nextHalf(ctx context.Context, step int, half string, max int, prev, answer string, snaps *gitrepo.Snapshots, startTree string) (spec runSpec, inv agents.Invocation, stop resume.StopReason, detail string) {
	if ctx.Err() != nil {
		return spec, inv, resume.StopCancelled, fmt.Sprintf("cancelled before the %s half of step %d", half, step)
	}
	bg := context.WithoutCancel(ctx)
	spec, err := l.loopSpec(bg, step, half, max, prev, answer, snaps, startTree)
	if err == nil {
		inv, err = l.runner.Prepare(spec.Req)
	}
	if err != nil {
		return spec, inv, resume.StopFailure, fmt.Sprintf("step %d (%s) could not start: %v", step, half, err)
	}
	l.pv.preview(&spec, inv, false)
	l.run.emit(events.RoleRelayBaton, fmt.Sprintf("step %d/%d %s (%s) confirmed by the loop's confirmation", step, max, spec.Req.Agent, half), nil,
		events.CommandMeta{Agent: spec.Req.Agent, Command: "continue", Confirmed: events.Bool(true), Step: step, Half: half})
	return spec, inv, "", ""
}

// stopLoop ends the loop for reason r: it says so, logs it, and returns lr
// with the error the reason calls for.
func (l *loop) stopLoop(lr LoopResult, max int, r resume.StopReason, detail string) (LoopResult, error) {
	lr.Reason, lr.Detail = r, detail
	l.run.Say("/continue stopped after %d of %d steps: %s (%s)", lr.Steps, max, r, detail)
	l.run.emit(events.RoleRelayBaton, fmt.Sprintf("continue stopped after %d/%d steps: %s: %s", lr.Steps, max, r, detail),
		map[string]string{events.RefPlan: events.PlanFile}, events.ExecuteMeta{Agent: l.executor, Steps: events.Int(lr.Steps), MaxSteps: max, StopReason: string(r),
			Half: lr.Half, AgentRuns: events.Int(lr.AgentRuns), PlanUpdates: events.Int(lr.PlanUpdates)})
	if r == resume.StopCancelled {
		return lr, toldError{fmt.Errorf("/continue: %s", detail)} // the stop line said it
	}
	if r == resume.StopFailure {
		return lr, fmt.Errorf("/continue: %s", detail)
	}
	return lr, nil
}

// loopSpec builds the run of one half of a step.
func (l *loop) loopSpec(ctx context.Context, step int, half string, max int, prev, answer string, snaps *gitrepo.Snapshots, startTree string) (runSpec, error) {
	plan, err := l.plan.read()
	if err != nil {
		return runSpec{}, err
	}
	if half == resume.HalfExecute {
		return runSpec{Command: "continue", Req: l.run.request(l.executor, agents.RoleExecutor,
			prompts.ContinueStep(prompts.ContinueInput{Plan: plan, Step: step, MaxSteps: max, Previous: prev}))}, nil
	}
	in := prompts.ContinuePlanInput{Plan: plan, Step: step, MaxSteps: max, Executor: l.executor, Answer: answer}
	lim := diet.Profiles[l.diet].Diff
	names, diff, err := "", "", errors.New("the step's start is unknown")
	if r := l.wt.Pending(); r != nil && startTree != "" {
		names, diff, err = r.DiffSince(ctx, startTree)
	} else if startTree != "" && snaps != nil {
		names, diff, err = snaps.Since(ctx, startTree)
	}
	if err != nil {
		// A resumed planner half (or a repository git cannot snapshot):
		// the whole working tree's change is the best evidence left.
		in.DiffNote = "The step's own diff is not available (" + summary(err.Error(), 120) + "): the working tree's diff against HEAD"
		diff = gitrepo.Diff(ctx, l.wt.WorkDir())
		var b strings.Builder
		ch, _ := gitrepo.Changes(ctx, l.wt.WorkDir())
		for _, c := range ch {
			fmt.Fprintf(&b, "%s %s\n", strings.TrimSpace(c.Status), c.Path)
		}
		names = b.String()
	}
	if len(diff) > lim {
		diff = diff[:lim] + "\n… (diff truncated to the diet budget)"
	}
	if ls := strings.Split(strings.TrimRight(names, "\n"), "\n"); len(ls) > 200 {
		names = strings.Join(ls[:200], "\n") + fmt.Sprintf("\n… and %d more", len(ls)-200)
	}
	in.ChangedFiles, in.Diff = names, diff
	return runSpec{Command: "continue", Req: l.run.request(l.planner, agents.RolePlanner, prompts.ContinuePlan(in))}, nil
}

// applyPlanUpdate writes the planner's answer to plan.md (backing up the
// plan it replaces, as /replan does) and logs a plan event. It reports
// whether it wrote plan.md and whether the planner declared the plan
// complete; an answer that is no plan leaves plan.md unchanged and is an
// error.
func (l *loop) applyPlanUpdate(step, max int, res agents.Result) (wrote, complete bool, err error) {
	text, complete := prompts.ParsePlanUpdate(res.FinalText)
	meta := events.PlanMeta{Agent: res.Agent, LoopStep: events.Int(step), MaxSteps: max, Complete: events.Bool(complete), Written: false}
	refs := map[string]string{events.RefPlan: events.PlanFile}
	previous, perr := l.plan.read()
	if perr != nil && !errors.Is(perr, ErrNoPlan) {
		return false, false, fmt.Errorf("after step %d: read plan.md: %v", step, perr)
	}
	switch {
	case text == "" && complete:
		l.run.Say("%s declared the plan complete; plan.md unchanged.", res.Agent)
		l.run.emit(events.RoleRelayBaton, fmt.Sprintf("plan complete after step %d/%d, per %s; plan.md unchanged", step, max, res.Agent), refs, meta)
		return false, true, nil
	case text == "":
		l.run.emit(events.RoleRelayBaton, fmt.Sprintf("plan.md not updated after step %d/%d: the planner's answer was empty", step, max), refs, meta)
		return false, false, fmt.Errorf("after step %d %s gave no plan (empty answer): plan.md unchanged", step, res.Agent)
	}
	missing := missingSections(text)
	if len(missing) == len(prompts.PlanSections) && len(missingSections(previous)) < len(prompts.PlanSections) {
		meta.Answer = summary(text, 300)
		l.run.emit(events.RoleRelayBaton, fmt.Sprintf("plan.md not updated after step %d/%d: %s's answer has none of the plan's sections", step, max, res.Agent), refs, meta)
		return false, false, fmt.Errorf("after step %d %s answered with no plan (none of its sections): plan.md unchanged; its answer is in the log", step, res.Agent)
	}
	if previous != "" {
		backup, err := l.backupPlan(previous)
		if err != nil {
			return false, false, fmt.Errorf("back up plan.md: %w (plan.md left unchanged)", err)
		}
		refs[events.RefBackup] = backup
	}
	if err := writeFileAtomic(l.plan.path(), []byte(text+"\n")); err != nil {
		return false, false, fmt.Errorf("write plan.md after step %d: %w", step, err)
	}
	meta.Written, meta.Chars, meta.MissingSections = true, len(text), missing
	next := nextStep(text)
	if next != "" {
		meta.NextStep = summary(next, 300)
	}
	what := "updated .ai-session/plan.md"
	if complete {
		what += " and declared the plan complete"
	}
	where := ""
	if refs[events.RefBackup] != "" {
		where = "; the previous plan is .ai-session/" + refs[events.RefBackup]
	}
	l.run.Say("%s %s after step %d (%d chars%s)%s", res.Agent, what, step, len(text), where, nextWords(next, complete))
	l.run.emit(events.RoleRelayBaton, fmt.Sprintf("plan.md updated by %s after step %d/%d (%d chars)%s%s", res.Agent, step, max, len(text),
		map[bool]string{true: ", plan complete"}[complete], nextWords(next, complete)), refs, meta)
	return true, complete, nil
}

func nextWords(next string, complete bool) string {
	if next == "" || complete {
		return ""
	}
	return ": next step: " + summary(next, 160)
}

var nextStepRE = lazyRE(`(?mi)^#+\s*Next step\s*$`)

// nextStep is the body of the plan's "Next step" section, or "".
func nextStep(plan string) string {
	loc := nextStepRE().FindStringIndex(plan)
	if loc == nil {
		return ""
	}
	body := plan[loc[1]:]
	if i := regexp.MustCompile(`(?m)^#+\s`).FindStringIndex(body); i != nil {
		body = body[:i[0]]
	}
	return strings.TrimSpace(body)
}

// backupPlan saves the plan being replaced as plan.<ts>.md (the /replan
// naming), never over an existing file nor through a symlink.
func (l *loop) backupPlan(previous string) (string, error) {
	base := "plan." + tsName(l.now())
	for i := 0; i < 100; i++ {
		name := base + ".md"
		if i > 0 {
			name = fmt.Sprintf("%s-%d.md", base, i)
		}
		f, err := os.OpenFile(filepath.Join(l.sessionDir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.WriteString(previous)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			return "", werr
		}
		return name, nil
	}
	return "", fmt.Errorf("100 backups named %s*.md already exist", base)
}

func cmdContinue(e *Engine, ctx context.Context, args string) error {
	n, err := resume.ParseMaxSteps(args)
	if err != nil {
		return err
	}
	_, err = e.Continue(ctx, n)
	if errors.Is(err, ErrDeclined) {
		return nil // already said
	}
	return err
}

// RecordContinue logs a one-shot `relay-baton continue` as the command
// event the room's /continue writes, so a resume knows the loop's bound.
func (e *Engine) RecordContinue(max int) {
	e.emit(events.RoleUser, fmt.Sprintf("continue --max-steps %d", max), nil, events.CommandMeta{Command: "continue", OneShot: true})
}

// maxDocBytes caps what the room reads of one of its own documents in
// .ai-session (plan.md, handoff.md, an edited prompt).
const maxDocBytes = 16 << 20

// readDoc reads one of the room's own files in .ai-session (plan.md on
// every loop half, handoff.md, ...) through the one helper: no blocking on
// a FIFO, no symlink followed, regular files only, at most maxDocBytes.
func readDoc(path string) ([]byte, error) {
	return safeio.ReadOwned(path, maxDocBytes)
}
