package room

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/room/preview"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// runSpec is one agent run a command wants.
type runSpec struct {
	Command string // the room command that asked for it (plan, execute, ...)
	Req     agents.Request
	Note    string // an extra preview line (e.g. the loop bound)
	Task    string // what the user typed, shown in the short preview
}

func (e *Engine) request(agent string, role agents.Role, prompt string) agents.Request {
	return agents.Request{
		Agent: agent, Role: role, Prompt: prompt, Dir: e.wt.RunDir(role), SessionDir: e.SessionDir,
		Timeout: e.timeout, AllowAPIKeyEnv: e.allow, AllowEnv: e.passEnv, Resume: e.convs.id(agent),
	}
}

// confirm previews spec and asks. It returns the invocation to run (the
// prompt may have been edited) or ErrDeclined / a Prepare error; both are
// logged.
func (pv *previews) confirm(ctx context.Context, spec *runSpec) (agents.Invocation, error) {
	var inv agents.Invocation
	if err := pv.lock.Refuse(); err != nil {
		// Nothing is previewed while another screen's run holds the
		// repository: said, and logged as a run not started.
		pv.wt.CancelReserved()
		pv.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s not previewed: %s", spec.Req.Agent, spec.Command, summary(err.Error(), 200)),
			nil, events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: false, Ran: false, Error: err.Error()})
		return inv, err
	}
	if err := pv.wt.Ready(spec.Req); err != nil {
		return inv, err
	}
	_, err := pv.confirmLoop(preview.Confirmation{
		Question: "run this? [y/N/e] ",
		Verb:     "runs",
		Noun:     "prompt",
		Preview: func(prompt string, edited bool) (string, error) {
			spec.Req.Prompt = prompt
			var err error
			inv, err = pv.runner.Prepare(spec.Req)
			if errors.Is(err, agents.ErrNotFound) && len(inv.Argv) > 0 {
				// What would run, then why it cannot.
				pv.preview(spec, inv, edited)
			}
			if err != nil {
				pv.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s could not start: %s", spec.Req.Agent, spec.Command, summary(err.Error(), 200)),
					nil, events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: false, Ran: false, Error: err.Error()})
				return "", fmt.Errorf("cannot start %s: %w", spec.Req.Agent, err)
			}
			return pv.preview(spec, inv, edited), nil
		},
		View: func(prompt string) { pv.out.say(events.RoleRelayBaton, "%s", pv.previewText(spec, inv, true)) },
		Card: func(prompt string) Preview {
			return Preview{Command: spec.Command, Agent: spec.Req.Agent, Role: string(spec.Req.Role),
				Text: pv.previewText(spec, inv, false), All: pv.previewText(spec, inv, true), Prompt: prompt,
				Argv: preview.ArgvSummary(inv.Argv, prompt), Cwd: inv.Dir, Policy: inv.Policy, Stripped: inv.Stripped, Passed: inv.Passed}
		},
		Confirmed: func(previewID string) {
			pv.emit(events.RoleUser, "confirmed: run "+spec.Req.Agent, nil,
				events.CommandMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: events.Bool(true), PreviewID: previewID, AutoYes: events.Bool(pv.autoYes)})
		},
		Declined: func(previewID, why string) { pv.declined(spec, inv, previewID, why) },
	}, spec.Req.Prompt)
	if err != nil {
		pv.wt.CancelReserved() // a reserved worktree folder goes with a no
	}
	return inv, err
}

func (pv *previews) declined(spec *runSpec, inv agents.Invocation, previewID, why string) {
	pv.say("cancelled. nothing ran.")
	pv.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s not run: %s", spec.Req.Agent, spec.Command, why), nil,
		events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: false, Ran: false, Cancelled: true,
			Reason: why, PreviewID: previewID, Argv: preview.ArgvSummary(inv.Argv, spec.Req.Prompt)})
}

// preview prints what would run, shortly (previewText), and logs a
// prompt_preview event.
func (pv *previews) preview(spec *runSpec, inv agents.Invocation, edited bool) string {
	prompt := spec.Req.Prompt
	n := len([]rune(prompt))
	argv := preview.ArgvSummary(inv.Argv, prompt)
	pv.out.say(events.RoleRelayBaton, "%s", pv.previewText(spec, inv, false))

	meta := events.PromptPreviewMeta{
		Agent: spec.Req.Agent, Role: string(spec.Req.Role), Command: spec.Command, Argv: argv,
		Cwd: inv.Dir, Policy: inv.Policy, Stripped: inv.Stripped, PromptChars: n, Edited: edited,
		Conversation: spec.Req.Resume,
	}
	var refs map[string]string
	if n <= preview.InlineMax {
		meta.Prompt = prompt
	} else if rel, err := pv.savePrompt(spec.Command, prompt); err == nil {
		refs = map[string]string{events.RefPrompt: rel}
	} else {
		meta.PromptError = err.Error()
	}
	text := fmt.Sprintf("%s %s /%s: %q (%d chars)", spec.Req.Agent, spec.Req.Role, spec.Command, summary(prompt, 100), n)
	return pv.emit(events.RoleRelayBaton, text, refs, meta)
}

// previewText is what a preview shows. The short one (all false): the
// command, the policy, the conversation, the arguments a trusted
// .relay-baton.json adds, the credentials held back or passed, the prompt's
// size and its first and last lines. The whole one (the answer v) adds the
// directory and every line of the prompt.
func (pv *previews) previewText(spec *runSpec, inv agents.Invocation, all bool) string {
	prompt := spec.Req.Prompt
	n := len([]rune(prompt))
	var b strings.Builder
	fmt.Fprintf(&b, "preview: /%s → %s (%s)\n", spec.Command, spec.Req.Agent, spec.Req.Role)
	fmt.Fprintf(&b, "  argv:    %s\n", preview.ArgvSummary(inv.Argv, prompt))
	if all {
		fmt.Fprintf(&b, "  cwd:     %s\n", inv.Dir)
	}
	fmt.Fprintf(&b, "  policy:  %s\n", inv.Policy)
	if line := pv.wt.Line(spec.Req); line != "" {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	fmt.Fprintf(&b, "  conversation: %s\n", pv.convs.line(spec.Req))
	if line := preview.ConfigLine(inv); line != "" {
		fmt.Fprintf(&b, "  config:  %s\n", line)
	}
	if inv.ClaudeSettings != "" {
		fmt.Fprintf(&b, "  project settings: %s\n", inv.ClaudeSettings)
	}
	// Credentials held back are always said; "none" only in the whole view.
	if len(inv.Stripped) > 0 {
		fmt.Fprintf(&b, "  env stripped: %s (credentials held back; pass one with /allow-env NAME, or --allow-env NAME at start)\n", strings.Join(inv.Stripped, ", "))
	} else if all {
		fmt.Fprintf(&b, "  env stripped: none\n")
	}
	if len(inv.Passed) > 0 {
		fmt.Fprintf(&b, "  env PASSED (on purpose, audited): %s\n", strings.Join(inv.Passed, ", "))
	}
	if k, ok := agents.CodexProviderKeyOf(inv); ok && spec.Req.Agent == agents.Codex && !k.Passed {
		// The run would fail for want of it: said before it starts.
		fmt.Fprintf(&b, "  key:     %s\n", k.Line())
	}
	if unset, plain := allowedNotPassed(pv.passEnv(), inv); len(unset)+len(plain) > 0 {
		var parts []string
		if len(unset) > 0 {
			parts = append(parts, strings.Join(unset, ", ")+" not set")
		}
		if len(plain) > 0 {
			parts = append(parts, strings.Join(plain, ", ")+" passed (not a credential)")
		}
		fmt.Fprintf(&b, "  env allowed (/allow-env, --allow-env): %s\n", strings.Join(parts, "; "))
	}
	if spec.Note != "" {
		fmt.Fprintf(&b, "  %s\n", spec.Note)
	}
	preview.PromptLines(&b, "prompt", prompt, spec.Task, n, all)
	return strings.TrimRight(b.String(), "\n")
}

// savePrompt writes a long prompt to .ai-session/prompts/ and returns its
// path relative to .ai-session.
func (pv *previews) savePrompt(command, prompt string) (string, error) {
	dir, err := workspace.EnsureSubdir(pv.sessionDir, "prompts")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s.md", tsName(pv.now()), command, events.NewUUID()[:8])
	if err := safeio.WriteFile(filepath.Join(dir, name), []byte(prompt)); err != nil {
		return "", err
	}
	return "prompts/" + name, nil
}

// tsName is an ISO timestamp with ':' and '.' replaced by '-', as in the
// reference's backup names.
func tsName(t time.Time) string {
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	return strings.NewReplacer(":", "-", ".", "-").Replace(s)
}

// execute runs a confirmed invocation, renders its activity and logs an
// agent_run event (plus audit events for passed API keys and a moved HEAD).
func (e *Engine) execute(ctx context.Context, spec runSpec, inv agents.Invocation) agents.Result {
	bg := context.WithoutCancel(ctx)
	release, err := e.lock.Hold(spec.Req.Agent, spec.Command)
	if err != nil {
		// Another screen's run started between the preview and the yes.
		e.Say("%v", err)
		e.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s could not start: %s", spec.Req.Agent, spec.Command, summary(err.Error(), 200)),
			nil, events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: true, Ran: false, Error: err.Error()})
		return agents.Result{Agent: spec.Req.Agent, ExitCode: -1, Err: err}
	}
	defer release()
	if err := e.wt.Enter(ctx, spec.Req, spec.Command); err != nil {
		err = fmt.Errorf("no worktree for the run: %w (nothing ran; relay-baton chat --in-place lets the executor edit your tree directly)", err)
		e.Say("%v", err)
		e.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s could not start: %s", spec.Req.Agent, spec.Command, summary(err.Error(), 200)),
			nil, events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: true, Ran: false, Error: err.Error()})
		return agents.Result{Agent: spec.Req.Agent, ExitCode: -1, Err: err}
	}
	releasePending, err := e.wt.HoldPending(spec.Req, spec.Command)
	if err != nil {
		e.Say("%s %s did not start: %v", spec.Req.Agent, spec.Command, err)
		e.emit(events.RoleRelayBaton, fmt.Sprintf("%s %s could not start: %s", spec.Req.Agent, spec.Command, summary(err.Error(), 200)),
			nil, events.AgentRunMeta{Agent: spec.Req.Agent, Command: spec.Command, Confirmed: true, Ran: false, Error: err.Error()})
		return agents.Result{Agent: spec.Req.Agent, ExitCode: -1, Err: err}
	}
	defer releasePending()
	before := gitrepo.Head(bg, spec.Req.Dir)
	if len(inv.Passed) > 0 {
		e.emit(events.RoleRelayBaton, fmt.Sprintf("API-key variables passed to %s: %s", spec.Req.Agent, strings.Join(inv.Passed, ", ")), nil,
			events.AuditMeta{Agent: spec.Req.Agent, Vars: inv.Passed})
	}
	req := spec.Req
	req.OnActivity = e.out.activity
	e.runStart = e.wt.Before(ctx, req)
	e.out.beginRun(req.Agent)
	res := e.runner.Run(ctx, req)
	release()
	own := runUsage(req.Agent, res.Usage, e.convs.previousReport(req))
	e.out.endRun(res, own)
	e.spent.addRun(req.Agent, spec.Command, e.now(), own)
	e.notifyEnd(res.Duration, fmt.Sprintf("%s /%s %s", req.Agent, spec.Command, endWord(res)))
	after := gitrepo.Head(bg, req.Dir)
	ms := res.Duration.Milliseconds()
	meta := events.AgentRunMeta{
		Agent: req.Agent, Role: string(req.Role), Command: spec.Command, Argv: preview.ArgvSummary(inv.Argv, req.Prompt),
		Confirmed: true, Ran: true, ExitCode: events.Int(res.ExitCode), DurationMs: &ms,
		Cancelled: res.Cancelled, TimedOut: res.TimedOut, CostUSD: own.CostUSD,
		InputTokens: own.InputTokens, CachedInputTokens: own.CachedInputTokens, OutputTokens: own.OutputTokens,
	}
	if own != res.Usage { // the CLI reported running totals: kept for a resumed room
		meta.ReportedCostUSD, meta.ReportedInputTokens = res.Usage.CostUSD, res.Usage.InputTokens
		meta.ReportedCachedInputTokens, meta.ReportedOutputTokens = res.Usage.CachedInputTokens, res.Usage.OutputTokens
	}
	if res.Err != nil {
		meta.Error = res.Err.Error()
	}
	if turns := e.convs.note(req.Agent, res, own); turns > 0 {
		meta.Conversation, meta.ConversationTurns = res.Session, turns
	}
	if res.ResumeFailed {
		meta.ResumeFailed = req.Resume
		e.convs.forget(req.Agent)
		e.Say("%s's conversation %s cannot be continued (%s). It is forgotten: the next %s run starts a new conversation, after its own preview.",
			req.Agent, req.Resume, summary(res.Err.Error(), 200), req.Agent)
	}
	if before != after {
		meta.HeadBefore, meta.HeadAfter = before, after
		e.Say("HEAD moved during the run: %s → %s. relay-baton never commits; the agent (or someone else) did.", short(before), short(after))
	}
	text := fmt.Sprintf("%s %s: exit %d in %s", req.Agent, spec.Command, res.ExitCode, res.Duration.Round(time.Millisecond))
	if res.Cancelled {
		text = fmt.Sprintf("%s %s: cancelled after %s", req.Agent, spec.Command, res.Duration.Round(time.Millisecond))
	}
	// A failure says why in the log too, so replay and resume show what
	// the terminal showed.
	reason := failureReason(req.Agent, res)
	if reason != "" {
		meta.Reason = reason
		text += ": " + reason
	}
	e.emit(events.Role(req.Agent), text, nil, meta)
	if before != after {
		e.emit(events.RoleRelayBaton, fmt.Sprintf("HEAD moved during %s %s: %s -> %s", req.Agent, spec.Command, short(before), short(after)), nil,
			events.AuditMeta{Agent: req.Agent, HeadBefore: before, HeadAfter: after})
	}
	e.last = &reports.LastRun{Command: spec.Command, Agent: req.Agent, ExitCode: res.ExitCode, Duration: res.Duration,
		Cancelled: res.Cancelled, At: e.now(), Summary: res.Summary, CostUSD: own.CostUSD, Reason: reason}
	releasePending() // the executor has ended: what follows may discard its run
	e.wt.After(ctx, spec.Command, req, e.runStart)
	return res
}

// endWord is how a run ended, in a word or two.
func endWord(res agents.Result) string {
	switch {
	case res.Cancelled:
		return "cancelled"
	case res.TimedOut:
		return "timed out"
	case res.ExitCode == 0 && res.Err == nil:
		return "finished"
	}
	return fmt.Sprintf("failed (exit %d)", res.ExitCode)
}

func short(id string) string {
	if id == "" {
		return "(no commit)"
	}
	return id[:min(10, len(id))]
}

// runOnce previews, confirms and runs one agent turn. It returns the
// result and an error when nothing ran or the run failed.
func (e *Engine) runOnce(ctx context.Context, spec runSpec) (agents.Result, error) {
	return e.runOnceThen(ctx, spec, nil)
}

// runOnceThen is runOnce with onYes called after the user confirmed and
// before the run starts (what a command writes only on a yes); an error
// from it ends the command with nothing run.
func (e *Engine) runOnceThen(ctx context.Context, spec runSpec, onYes func() error) (agents.Result, error) {
	inv, err := e.pv.confirm(ctx, &spec)
	if err != nil {
		return agents.Result{}, err
	}
	if onYes != nil {
		if err := onYes(); err != nil {
			return agents.Result{}, err
		}
	}
	res := e.execute(ctx, spec, inv)
	if res.ResumeFailed && ctx.Err() == nil {
		// Nothing reached the model: offer the same run in a new
		// conversation, previewed and confirmed again.
		spec.Req.Resume = e.convs.id(spec.Req.Agent)
		if inv, err = e.pv.confirm(ctx, &spec); err != nil {
			return res, err
		}
		res = e.execute(ctx, spec, inv)
	}
	return res, resultErr(res)
}

func resultErr(res agents.Result) error {
	if res.Cancelled || res.TimedOut || res.Err != nil || res.ExitCode != 0 {
		return &AgentError{Agent: res.Agent, ExitCode: res.ExitCode, Cancelled: res.Cancelled, Err: res.Err}
	}
	return nil
}
