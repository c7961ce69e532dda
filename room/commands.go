package room

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/safeio"
)

// Command is one slash command: a row of the same shape as the command
// line's (cli.Entry: name, aliases, arguments, one line of help). The table
// drives dispatch, /help and tab completion, so they cannot drift apart.
type Command struct {
	cli.Entry
	Agent bool // may start an agent (previewed and confirmed)
	// Args completes the arguments typed so far (fields before the one
	// being completed are in done); nil = no argument completion.
	Args func(e *Engine, done []string) []string
	Run  func(e *Engine, ctx context.Context, args string) error
}

// errExit is returned by /exit.
var errExit = errors.New("exit")

// Commands is the room's command table, in /help order.
var Commands []*Command

func init() {
	Commands = []*Command{
		{Entry: cli.Entry{Name: "agent", Usage: "claude|codex|orchestrator", Short: "Switch the active agent (free text goes to it)"}, Args: argsAgents, Run: cmdAgent},
		{Entry: cli.Entry{Name: "target", Usage: "<sessionId|lead>", Short: "Chat with this Claude Code or Codex session (switches to the orchestrator lane)"}, Args: func(e *Engine, done []string) []string { return e.chat.CompleteTargets(done) }, Run: func(e *Engine, ctx context.Context, a string) error { return e.chat.ChooseTarget(ctx, a) }},
		{Entry: cli.Entry{Name: "targets", Short: "List the workspace's Claude Code and Codex sessions (chat-capable, busy, queue) (read-only)"}, Run: func(e *Engine, ctx context.Context, a string) error { return e.chat.ListTargets(ctx, a) }},
		{Entry: cli.Entry{Name: "cancel", Usage: "[id]", Short: "Remove a chat message still in the session's inbox (default: your last)"}, Args: func(e *Engine, done []string) []string { return e.chat.CompleteQueued(done) }, Run: func(e *Engine, ctx context.Context, a string) error { return e.chat.Cancel(ctx, a) }},
		{Entry: cli.Entry{Name: "resend", Short: "Queue the last unconfirmed chat message again (preview first)"}, Run: func(e *Engine, ctx context.Context, a string) error { return e.chat.Resend(ctx, a) }},
		{Entry: cli.Entry{Name: "plan", Usage: "<task>", Short: "Have the planner write plan.md (preview first)"}, Agent: true, Run: cmdPlan},
		{Entry: cli.Entry{Name: "replan", Usage: "<task>", Short: "Back up plan.md, then plan again (preview first)"}, Agent: true, Run: cmdReplan},
		{Entry: cli.Entry{Name: "execute", Short: "Run the executor on plan.md (preview first)"}, Agent: true, Run: cmdExecute},
		{Entry: cli.Entry{Name: "continue", Usage: "[--max-steps N | -n N | N]", Short: "Bounded plan<->execute loop: codex works, claude updates the plan; one confirmation"}, Agent: true, Args: argsContinue, Run: cmdContinue},
		{Entry: cli.Entry{Name: "diff", Usage: "[file] | --all", Short: "Show the executor run's change (--all: your working tree against HEAD) (read-only)"}, Args: argsDiff, Run: func(e *Engine, ctx context.Context, a string) error { return e.wt.Diff(ctx, a) }},
		{Entry: cli.Entry{Name: "apply", Short: "Bring the pending run's change into your tree, three-way, after a preview (all or nothing)"}, Run: func(e *Engine, ctx context.Context, a string) error { return e.wt.Apply(ctx, a) }},
		{Entry: cli.Entry{Name: "undo", Short: "Discard the pending run, or take out what /apply wrote, after a preview (no commit, index untouched)"}, Run: func(e *Engine, ctx context.Context, a string) error { return e.wt.Undo(ctx, a) }},
		{Entry: cli.Entry{Name: "runs", Short: "List the executor runs kept for this repository: worktree, age, change size (read-only)"}, Run: func(e *Engine, ctx context.Context, a string) error { return e.wt.Runs(ctx, a) }},
		{Entry: cli.Entry{Name: "review", Usage: "[claude]", Short: "Deterministic review of changes vs plan; `claude` asks claude (preview first)"}, Args: argsFixed("claude"), Run: cmdReview},
		{Entry: cli.Entry{Name: "diagnose", Short: "doctor --deep: git, agents, keys, .ai-session health (read-only)"}, Run: cmdDiagnose},
		{Entry: cli.Entry{Name: "handoff", Usage: "[claude|codex]", Short: "Write handoff.md and launch the agent with it (preview first)"}, Agent: true, Args: argsFixed(agents.Claude, agents.Codex), Run: cmdHandoff},
		{Entry: cli.Entry{Name: "new", Usage: "[claude|codex]", Short: "Start a new conversation with the agent (default: both); otherwise each agent continues its own"}, Args: argsFixed(agents.Claude, agents.Codex), Run: cmdNew},
		{Entry: cli.Entry{Name: "budget", Short: "Context budget: diet profile, sizes, ratio (read-only)"}, Run: cmdBudget},
		{Entry: cli.Entry{Name: "costs", Short: "What each agent run of this session cost, and the session's total (read-only)"}, Run: cmdCosts},
		{Entry: cli.Entry{Name: "status", Short: "Active agent, plan age, changed files, last run (read-only)"}, Run: cmdStatus},
		{Entry: cli.Entry{Name: "resume", Usage: "[N]", Short: "Rebuild state from conversation.jsonl: agent, plan, loop, pending chat; recap N turns"}, Run: cmdResume},
		{Entry: cli.Entry{Name: "replay", Usage: "[--kind k,..] [--role r,..] [--session id,..] [--since D] [--limit N] [--follow] [--json] [--file PATH]", Short: "Show the recorded conversation timeline (read-only)"}, Args: argsFixed("--kind", "--role", "--session", "--limit"), Run: cmdReplay},
		{Entry: cli.Entry{Name: "note", Usage: "<text>", Short: "Log a note (nothing runs)"}, Run: cmdNote},
		{Entry: cli.Entry{Name: "allow-env", Usage: "[NAME...]", Short: "Pass a held-back variable (a provider's key) to the agents from now on, in this room (logged)"}, Run: cmdAllowEnv},
		{Entry: cli.Entry{Name: "login", Usage: "[claude|codex]", Short: "How to log in to the agents (nothing runs)"}, Args: argsFixed(agents.Claude, agents.Codex), Run: cmdLogin},
		{Entry: cli.Entry{Name: "help", Short: "List the room's commands"}, Run: cmdHelp},
		{Entry: cli.Entry{Name: "exit", Aliases: []string{"quit"}, Short: "Leave the room (Ctrl-D works too)"}, Run: func(*Engine, context.Context, string) error { return errExit }},
	}
}

func argsFixed(words ...string) func(*Engine, []string) []string {
	return func(_ *Engine, done []string) []string {
		if len(done) > 0 {
			return nil
		}
		return words
	}
}

func argsAgents(_ *Engine, done []string) []string {
	if len(done) > 0 {
		return nil
	}
	return []string{agents.Claude, agents.Codex, AgentOrchestrator}
}

// argsDiff completes --all and the files the last run changed.
func argsDiff(e *Engine, done []string) []string {
	if len(done) > 0 && done[0] == "--all" {
		return nil
	}
	w := []string{}
	if len(done) == 0 {
		w = append(w, "--all")
	}
	if e != nil {
		for _, f := range e.wt.Files() {
			if f.Path == render.InertLine(f.Path) && !strings.ContainsAny(f.Path, " \t") {
				w = append(w, f.Path) // a name completion cannot type whole is left out
			}
		}
	}
	return w
}

func argsContinue(_ *Engine, done []string) []string {
	if len(done) > 0 {
		return nil
	}
	return []string{"--max-steps"}
}

// Lookup finds a command by name or alias (case-insensitive).
func Lookup(name string) *Command {
	name = strings.ToLower(name)
	for _, c := range Commands {
		if c.Called(name) {
			return c
		}
	}
	return nil
}

// Line is a parsed input line.
type Line struct {
	Cmd  *Command // nil for free text and empty lines
	Name string   // the command name as typed, lower-cased
	Args string   // the rest of the line, trimmed
	Text string   // free text (Cmd == nil)
}

var commandRE = lazyRE(`^/([A-Za-z][A-Za-z-]*)(?:\s+(.*))?$`)

// UnknownCommandError is a slash command the room does not know: its
// message suggests the nearest names, or /help.
type UnknownCommandError struct{ Name string }

func (e *UnknownCommandError) Error() string {
	var names []string
	for _, c := range Commands {
		names = append(names, c.Names()...)
	}
	if s := cli.DidYouMean("/", cli.Suggest(e.Name, names)); s != "" {
		return fmt.Sprintf("unknown command: /%s%s", e.Name, s)
	}
	return fmt.Sprintf("unknown command: /%s (try /help)", e.Name)
}

// Parse reads one input line: a slash command (name case-insensitive),
// free text, or nothing.
func Parse(line string) (Line, error) {
	s := strings.TrimSpace(line)
	if s == "" {
		return Line{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return Line{Text: s}, nil
	}
	m := commandRE().FindStringSubmatch(s)
	if m == nil {
		name, _, _ := strings.Cut(s[1:], " ")
		return Line{}, &UnknownCommandError{Name: name}
	}
	c := Lookup(m[1])
	if c == nil {
		return Line{}, &UnknownCommandError{Name: m[1]}
	}
	return Line{Cmd: c, Name: strings.ToLower(m[1]), Args: strings.TrimSpace(m[2])}, nil
}

// Process runs one input line. exit is true when the room should close;
// err is the command's failure, to print: it never means "leave".
func (e *Engine) Process(ctx context.Context, input string) (exit bool, err error) {
	l, err := Parse(input)
	if err != nil {
		e.emit(events.RoleUser, strings.TrimSpace(input), nil, events.CommandMeta{Error: err.Error()})
		return false, err
	}
	switch {
	case l.Cmd == nil && l.Text == "":
		return false, nil
	case l.Cmd == nil && e.Active == AgentOrchestrator:
		return false, e.chat.Chat(ctx, l.Text)
	case l.Cmd == nil:
		return false, e.Ask(ctx, l.Text)
	}
	if l.Cmd.Name != "note" {
		e.emit(events.RoleUser, strings.TrimSpace(input), nil, events.CommandMeta{Command: l.Cmd.Name})
	}
	if err := l.Cmd.Run(e, ctx, l.Args); err != nil {
		if errors.Is(err, errExit) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// HelpWidth is the width /help fits in: no line of HelpText is longer.
const HelpWidth = 79

// HelpText renders the command table within HelpWidth columns: the usage
// in a column when it is short, else on a line of its own; descriptions
// wrap at word boundaries.
func HelpText() string {
	const col = 26 // "  /" + usage column + two spaces
	var b strings.Builder
	for _, c := range Commands {
		u := "/" + c.Synopsis()
		if n := utf8.RuneCountInString(u); n+4 <= col {
			b.WriteString(render.Wrap("  "+u+strings.Repeat(" ", col-2-n), c.Short, col, HelpWidth))
		} else {
			b.WriteString(render.Wrap("  ", u, 4, HelpWidth))
			b.WriteString(render.Wrap(strings.Repeat(" ", col), c.Short, col, HelpWidth))
		}
	}
	b.WriteString(render.Wrap("  ", "Free text (no slash) asks the active agent, read-only, after a preview. With /agent orchestrator it is a chat message to the running Claude Code or Codex session, queued after a preview.", 2, HelpWidth))
	b.WriteString(render.Wrap("  ", "A paste is one message, however many lines; end a line with \\ (or press Alt-Enter) to type a newline.", 2, HelpWidth))
	return b.String()
}

// cmdLogin says how to log in: the agents log in in their own CLIs, never
// through the room (which only ever runs them in print mode).
func cmdLogin(e *Engine, _ context.Context, args string) error {
	switch a := strings.ToLower(strings.TrimSpace(args)); a {
	case agents.Claude, agents.Codex:
		e.Say("to log in to %s: %s (once; the room runs %s with that login)", a, agents.LoginHowTo(a), a)
	case "":
		for _, a := range []string{agents.Claude, agents.Codex} {
			e.Say("to log in to %s: %s (once; the room runs %s with that login)", a, agents.LoginHowTo(a), a)
		}
	default:
		return fmt.Errorf("/login takes claude or codex, not %q", args)
	}
	return nil
}

func cmdHelp(e *Engine, _ context.Context, _ string) error {
	e.out.raw(HelpText())
	return nil
}

func cmdAgent(e *Engine, _ context.Context, args string) error {
	f := strings.Fields(strings.ToLower(args))
	if len(f) == 0 {
		e.Say("active agent: %s (choose with /agent claude|codex|orchestrator)", e.Active)
		return nil
	}
	if len(f) > 1 {
		return fmt.Errorf("/agent takes one name, not %q: /agent claude|codex|orchestrator", args)
	}
	switch f[0] {
	case agents.Claude, agents.Codex:
		e.Active = f[0]
		e.Say("active agent: %s", e.Active)
		e.emit(events.RoleRelayBaton, "active agent: "+e.Active, nil, events.StatusMeta{Agent: e.Active, Switched: true})
		return nil
	case AgentOrchestrator:
		return e.UseOrchestrator(e.chat.Target)
	}
	// codx: did you mean /agent codex?
	hint := cli.DidYouMean("/agent ", cli.Suggest(f[0], argsAgents(e, nil)))
	return fmt.Errorf("unknown agent %q%s: choose claude, codex or orchestrator", f[0], hint)
}

// Note logs text; nothing runs.
func (e *Engine) Note(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("/note needs text: /note <text>")
	}
	if _, err := e.appendEvent(events.RoleUser, text, nil, events.MessageMeta{Note: true}); err != nil {
		return fmt.Errorf("note not recorded: %w", err)
	}
	e.Say("noted.")
	return nil
}

func cmdNote(e *Engine, _ context.Context, args string) error { return e.Note(args) }

// Ask sends free text to the active agent as a read-only ask turn.
func (e *Engine) Ask(ctx context.Context, text string) error {
	e.emit(events.RoleUser, summary(text, 2000), nil, events.MessageMeta{Agent: e.Active})
	plan, _ := e.planMD.read()
	in := prompts.AskInput{Question: text, Plan: plan}
	if plan != "" && e.convs.holdsPlan(e.Active, plan) { // the conversation has it: not sent again
		in.Plan, in.PlanKnown = "", true
	}
	spec := runSpec{Command: "ask", Req: e.request(e.Active, agents.RoleAsk, prompts.Ask(in)), Task: text}
	res, err := e.runOnce(ctx, spec)
	if plan != "" && res.Session != "" && !res.ResumeFailed && (in.Plan != "" || in.PlanKnown) {
		e.convs.notePlan(res.Agent, res.Session, plan)
	}
	if err != nil {
		return err
	}
	e.emit(events.Role(res.Agent), summary(res.FinalText, 1000), nil, events.MessageMeta{Agent: res.Agent})
	return nil
}

// Plan runs the planner on task and writes plan.md from its final answer.
// With replan, the current plan.md is backed up first and given to the
// planner.
func (e *Engine) Plan(ctx context.Context, task string, replan bool) error {
	cmd := "plan"
	if replan {
		cmd = "replan"
	}
	task = strings.TrimSpace(task)
	if task == "" {
		return fmt.Errorf("/%s needs a task: /%s <task>", cmd, cmd)
	}
	var previous string
	if replan {
		p, err := e.planMD.read()
		if err != nil && !errors.Is(err, ErrNoPlan) {
			return err
		}
		previous = p
	}
	rm := gitrepo.Map(ctx, e.Root)
	if lim := diet.Profiles[e.Diet].RepoMap; len(rm) > lim {
		rm = rm[:lim] + "\n… (truncated)"
	}
	spec := runSpec{Command: cmd, Req: e.request(e.Planner, agents.RolePlanner, prompts.Plan(prompts.PlanInput{Task: task, Previous: previous, RepoMap: rm})), Task: task}
	res, err := e.runOnce(ctx, spec)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(res.FinalText)
	if text == "" {
		e.emit(events.RoleRelayBaton, "plan.md not written: the planner's final answer was empty", nil, events.PlanMeta{Agent: res.Agent, Written: false})
		return fmt.Errorf("%s gave no final answer: plan.md not written", res.Agent)
	}
	refs := map[string]string{events.RefPlan: events.PlanFile}
	// The plan this one replaces, /plan's as /replan's, is backed up.
	old, err := e.planMD.read()
	if err != nil && !errors.Is(err, ErrNoPlan) {
		return fmt.Errorf("back up plan.md: %w (plan.md left unchanged)", err)
	}
	if old != "" {
		backup := "plan." + tsName(e.now()) + ".md"
		if err := safeio.WriteFile(filepath.Join(e.SessionDir, backup), []byte(old)); err != nil {
			return fmt.Errorf("back up plan.md: %w (plan.md left unchanged)", err)
		}
		refs[events.RefBackup] = backup
		e.Say("backed up the previous plan as .ai-session/%s", backup)
	}
	if err := writeFileAtomic(e.planMD.path(), []byte(text+"\n")); err != nil {
		return err
	}
	e.convs.notePlan(res.Agent, res.Session, text) // the planner's conversation wrote it
	missing := missingSections(text)
	meta := events.PlanMeta{Agent: res.Agent, Chars: len(text), Written: true, MissingSections: missing}
	if len(missing) > 0 {
		e.Say("note: the plan lacks sections: %s", strings.Join(missing, ", "))
	}
	e.Say("wrote .ai-session/plan.md (%d chars).", len(text))
	e.emit(events.RoleRelayBaton, fmt.Sprintf("plan.md written by %s (%d chars): %s", res.Agent, len(text), summary(task, 120)), refs, meta)
	return nil
}

func missingSections(plan string) []string {
	var miss []string
	for _, s := range prompts.PlanSections {
		if !regexp.MustCompile(`(?mi)^#+\s*` + regexp.QuoteMeta(s) + `\s*$`).MatchString(plan) {
			miss = append(miss, s)
		}
	}
	return miss
}

// writeFileAtomic writes one of the room's documents (plan.md, review.md,
// handoff.md) durably, mode 0600.
func writeFileAtomic(path string, data []byte) error {
	return safeio.WriteFileAtomic(path, data, 0o600, true)
}

func cmdPlan(e *Engine, ctx context.Context, args string) error   { return e.Plan(ctx, args, false) }
func cmdReplan(e *Engine, ctx context.Context, args string) error { return e.Plan(ctx, args, true) }

// Execute runs the executor once on plan.md.
func (e *Engine) Execute(ctx context.Context) error {
	plan, err := e.planMD.read()
	if err != nil {
		return err
	}
	spec := runSpec{Command: "execute", Req: e.request(e.Executor, agents.RoleExecutor, prompts.Execute(plan))}
	res, err := e.runOnce(ctx, spec)
	if res.Agent == "" { // nothing ran
		return err
	}
	n := e.wt.ChangedFiles(context.WithoutCancel(ctx))
	e.emit(events.Role(res.Agent), fmt.Sprintf("execute by %s: exit %d, %s; %s", res.Agent, res.ExitCode, render.Count(n, "changed file"), summary(res.FinalText, 300)),
		map[string]string{events.RefPlan: events.PlanFile}, events.ExecuteMeta{Agent: res.Agent, ExitCode: events.Int(res.ExitCode), ChangedFiles: events.Int(n)})
	return err
}

func cmdExecute(e *Engine, ctx context.Context, args string) error {
	if strings.TrimSpace(args) != "" {
		return fmt.Errorf("/execute takes no arguments (it runs plan.md)")
	}
	return e.Execute(ctx)
}

func cmdReview(e *Engine, ctx context.Context, args string) error {
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		r, err := e.Review(ctx)
		if err != nil {
			return err
		}
		e.out.sayInline(events.RoleRelayBaton, r.Text())
		return nil
	case agents.Claude:
		return e.AgentReview(ctx)
	}
	return fmt.Errorf("usage: /review [claude], not /review %s", args)
}

func cmdDiagnose(e *Engine, ctx context.Context, args string) error {
	r := e.Doctor(ctx, true)
	e.out.raw(r.RenderWidth(e.out.color, HelpWidth)) // as /help: words never broken

	return nil
}

func cmdHandoff(e *Engine, ctx context.Context, args string) error {
	to := strings.ToLower(strings.TrimSpace(args))
	if to == "" {
		to = agents.Codex
		if e.Active == agents.Codex {
			to = agents.Claude
		}
	}
	return e.Handoff(ctx, to)
}

func cmdBudget(e *Engine, ctx context.Context, args string) error {
	r := e.Budget(ctx)
	e.emitBudget(r)
	e.Say("%s", strings.TrimRight(r.Text()+e.convs.text()+e.spent.Text(), "\n"))
	return nil
}

func (e *Engine) emitBudget(r diet.Report) {
	e.emit(events.RoleRelayBaton, fmt.Sprintf("diet %s: %d chars, ratio %.2f", r.Diet, r.Total, r.Ratio), nil,
		events.BudgetMeta{Diet: string(r.Diet), Chars: r.Total, Ratio: r.Ratio})
}

func cmdStatus(e *Engine, ctx context.Context, args string) error {
	s := e.Status(ctx)
	e.Say("%s", strings.TrimRight(s.Text(), "\n"))
	return nil
}

func cmdReplay(e *Engine, ctx context.Context, args string) error {
	fs := pflag.NewFlagSet("/replay", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := replay.Options{File: e.LogPath(), Color: e.out.color, Now: e.now}
	check := replay.AddFlags(fs, &o)
	if err := fs.Parse(strings.Fields(args)); err != nil {
		return fmt.Errorf("/replay: %v (flags: %s)", err, strings.Join(flagNames(fs), " "))
	}
	if o.File == "" { // AddFlags resets it to the flag's default
		o.File = e.LogPath()
	}
	if err := check(); err != nil {
		return fmt.Errorf("/replay: %v", err)
	}
	if o.Follow {
		return fmt.Errorf("/replay --follow is not available inside the room; run relay-baton replay --follow in another terminal")
	}
	var b strings.Builder
	if err := replay.Run(ctx, &b, o); err != nil {
		return err
	}
	e.out.raw(b.String())
	return nil
}

func flagNames(fs *pflag.FlagSet) []string {
	var n []string
	fs.VisitAll(func(f *pflag.Flag) { n = append(n, "--"+f.Name) })
	sort.Strings(n)
	return n
}

// Record logs a one-shot command line as a command event (the REPL logs
// what was typed in Process).
func (e *Engine) Record(line string) {
	e.emit(events.RoleUser, line, nil, events.CommandMeta{OneShot: true})
}

// BudgetEvent measures the budget and logs a budget event.
func (e *Engine) BudgetEvent(ctx context.Context) diet.Report {
	r := e.Budget(ctx)
	e.emitBudget(r)
	return r
}
