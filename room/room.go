// Package room is the Agent Room's engine (Engine): it parses and runs the
// room's slash commands, previews and confirms every agent run, and writes
// every turn to .ai-session/conversation.jsonl. It knows no terminal: the
// REPL (package repl) drives it from one through Terminal, Notifier and
// the output methods in frontend.go. The one-shot commands (plan, execute,
// continue, handoff, review, status, budget, doctor, note) call the same
// Engine methods, so no logic lives in the REPL layer.
//
//	input ─► Parse ─► Engine.Process ─► Runner (agents) ─► Activity ─► printer (render.Terminal)
//	                                 └► chatlane.Lane ─► conversation.Send/Follow (orchestrator lane)
//	every turn ─► emit(role, text, refs, events.XxxMeta) ─► conversation.jsonl ─► Replay, ReadResume
//
// Agent runs go through the small Runner interface: production uses the
// agents package (AgentsRunner), tests use fakes. The engine drives parts
// of its own, each handed a few of its funcs or fields, never the engine:
// the previews and their confirmation (previews, on package preview's
// loop), the executor's runs and their work (package worktrack), the
// orchestrator lane's client (package chatlane; the lane's logic is
// conversation's), the run lock (package runlock), the panel's git facts
// (package repofacts) and the /continue loop (loop, continue.go).
package room

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/room/chatlane"
	"github.com/relay-baton/relay-baton/room/preview"
	"github.com/relay-baton/relay-baton/room/repofacts"
	"github.com/relay-baton/relay-baton/room/runlock"
	"github.com/relay-baton/relay-baton/room/worktrack"
	"github.com/relay-baton/relay-baton/runs"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/workspace"
)

// Runner starts agents. AgentsRunner is the production implementation.
type Runner interface {
	Prepare(agents.Request) (agents.Invocation, error)
	Run(context.Context, agents.Request) agents.Result
}

// AgentsRunner runs agents through the agents package.
type AgentsRunner struct{}

// Prepare calls agents.Prepare.
func (AgentsRunner) Prepare(r agents.Request) (agents.Invocation, error) { return agents.Prepare(r) }

// Run calls agents.Run.
func (AgentsRunner) Run(ctx context.Context, r agents.Request) agents.Result {
	return agents.Run(ctx, r)
}

// Terminal is how the engine talks to a person: it asks a question and
// reads one answer line, and lets them edit a prompt. The REPL implements
// it with readline; one-shot commands with a line reader.
type Terminal = preview.Terminal

// Errors the one-shot commands map to exit codes.
var (
	// ErrDeclined: the user did not confirm; nothing ran.
	ErrDeclined = preview.ErrDeclined
	// ErrNoPlan: a command needs .ai-session/plan.md.
	ErrNoPlan = errors.New("no plan: .ai-session/plan.md does not exist (make one first: /plan <task> in the room, or relay-baton plan <task>)")
	// ErrNeedYes: confirmation needed but there is no terminal to ask.
	ErrNeedYes = preview.ErrNeedYes
	// ErrNoEditor: no editor for a preview's e (preview.EditText).
	ErrNoEditor = preview.ErrNoEditor
)

// AgentError says an agent run did not succeed.
type AgentError struct {
	Agent     string
	ExitCode  int
	Cancelled bool
	Err       error
}

func (e *AgentError) Error() string {
	switch {
	case e.Cancelled:
		return e.Agent + " run cancelled"
	case e.Err != nil:
		return fmt.Sprintf("%s failed (exit %d): %v", e.Agent, e.ExitCode, e.Err)
	}
	return fmt.Sprintf("%s failed (exit %d)", e.Agent, e.ExitCode)
}

func (e *AgentError) Unwrap() error { return e.Err }

// Told reports whether the user has been told already: a cancelled run's
// summary line ("claude: cancelled · 3s") says it, and the REPL prints no
// second line for one Ctrl-C.
func (e *AgentError) Told() bool { return e.Cancelled }

// toldError is an error the room has already said (a /continue loop's
// stop line): the REPL does not print it again; one-shot commands still
// get it for their exit code.
type toldError struct{ error }

func (toldError) Told() bool      { return true }
func (e toldError) Unwrap() error { return e.error }

// Told reports whether err was said to the user already.
func Told(err error) bool {
	var t interface{ Told() bool }
	return errors.As(err, &t) && t.Told()
}

// Config builds an Engine.
type Config struct {
	Dir            string // any directory inside the repository ("" = cwd)
	Runner         Runner // nil = AgentsRunner
	Out            io.Writer
	Color          bool
	Spinner        bool     // animate a pulse while an agent thinks (terminal output only)
	Term           Terminal // nil: confirmations need AutoYes
	AutoYes        bool     // --yes: confirm every preview
	AllowAPIKeyEnv bool
	AllowEnv       []string // --allow-env NAME: credential-like variables passed to agents on purpose
	Agent          string   // active agent at start ("" = claude)
	Diet           string   // diet profile ("" = balanced)
	Timeout        time.Duration
	Getenv         func(string) string // nil = os.Getenv
	Now            func() time.Time    // nil = time.Now
	// ReadOnly opens the room for a report (status, budget, review,
	// doctor): nothing is created or written, not even .ai-session or the
	// conversation log.
	ReadOnly bool
	// NoRepo (with ReadOnly) allows a folder outside any git repository:
	// Root is then "" and only the checks that need no repository run
	// (doctor).
	NoRepo bool
	// InPlace runs the executor in the user's working tree (no worktree;
	// --in-place, or "in_place" in the user's worktree.json).
	InPlace bool
}

// failureReason is why res failed, in one line ("" when it did not fail
// or was cancelled, which the event's text already says).
func failureReason(agent string, res agents.Result) string {
	if res.Err == nil || res.Cancelled {
		return ""
	}
	msg := strings.TrimPrefix(res.Err.Error(), "agent "+agent+": ")
	return summary(msg, 300)
}

// Engine is the room's state and command processor. Methods are not safe
// for concurrent use (one turn at a time), except that agent activity is
// rendered from the runner's goroutine under the output lock.
type Engine struct {
	Root       string
	SessionDir string
	SessionID  string
	Active     string // claude or codex
	Planner    string
	Executor   string
	Reviewer   string
	Diet       string

	runner  Runner
	pv      *previews // every preview and its confirmation (confirm.go)
	log     *events.Log
	out     *printer
	allow   bool
	passEnv []string
	timeout time.Duration
	getenv  func(string) string
	now     func() time.Time
	last    *reports.LastRun
	logWarn sync.Once
	logMu   sync.Mutex
	logErr  error              // the first failed append (LogErr)
	chat    *chatlane.Lane     // the orchestrator lane (package chatlane; lane.go)
	cont    continuity         // carried over by Resume (resume.go)
	convs   agentConvs         // each agent's conversation (conversations.go)
	repo    *repofacts.Cache   // the context panel's git facts (package repofacts)
	notify  Notifier           // the end of a long or unwatched wait (SetNotifier); nil: none
	wt      *worktrack.Tracker // the executor's runs and their work: /diff, /apply, /undo, /runs (package worktrack; work.go)
	spent   Spent              // what this session's runs cost (costs.go)
	// runStart is the tree the last executor run started from ("" when
	// unknown): a /continue step's diff for the planner.
	runStart string
	planMD   planDoc // .ai-session/plan.md (plan.go)
	// The repository's run lock while this engine's agent run holds it,
	// and the screen named in its record (SetScreen; runlock.go).
	lock *runlock.Lock
}

// ConfigError is a Config value the room does not know (an agent name, a
// diet profile): the caller's usage error, not a failure.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }

// New opens the room for the repository containing cfg.Dir: it creates
// .ai-session if needed and opens the conversation log.
func New(cfg Config) (*Engine, error) {
	dir := cfg.Dir
	if dir == "" {
		dir = "."
	}
	root, err := workspace.FindRoot(dir)
	if err != nil && !(cfg.ReadOnly && cfg.NoRepo && errors.Is(err, workspace.ErrNotGitRepo)) {
		return nil, err
	}
	var sd string
	var lg *events.Log
	switch {
	case root == "":
	case cfg.ReadOnly:
		sd = workspace.SessionDir(root)
	default:
		if sd, err = workspace.EnsureSessionDir(root); err != nil {
			return nil, err
		}
		if lg, err = events.OpenLog(workspace.LogPath(root)); err != nil {
			return nil, err
		}
	}
	e := &Engine{
		Root: root, SessionDir: sd, SessionID: events.NewUUID(),
		Active: cfg.Agent, Planner: agents.Claude, Executor: agents.Codex, Reviewer: agents.Claude,
		Diet: cfg.Diet, runner: cfg.Runner, log: lg, pv: &previews{term: cfg.Term, autoYes: cfg.AutoYes, sessionDir: sd},
		allow: cfg.AllowAPIKeyEnv, passEnv: cfg.AllowEnv, timeout: cfg.Timeout, getenv: cfg.Getenv, now: cfg.Now,
		repo: repofacts.New(root),
	}
	e.chat = chatlane.New(dir, chatlane.Deps{Active: func() string { return e.Active }, Activate: func() { e.Active = AgentOrchestrator },
		Say: e.Say, Print: e.Print, Emit: e.emit, Confirm: e.pv.confirmLoop, SavePrompt: e.pv.savePrompt,
		AutoYes: func() bool { return e.pv.autoYes }, Notify: e.notifyEnd, Screen: laneScreen{e}})
	if uc, err := runs.LoadUserConfig(); err != nil {
		e.Close()
		return nil, &ConfigError{err.Error()}
	} else {
		e.wt = worktrack.New(worktrack.Deps{Root: root, SessionID: e.SessionID, ReadOnly: lg == nil, Dir: dir,
			InPlace: cfg.InPlace || uc.InPlace, Options: runs.Options{Copy: uc.Copy, Link: uc.Link},
			Now: func() time.Time { return e.now() }, Say: e.Say, Emit: e.emit, Confirm: e.pv.yesTo, ShowDiff: e.pv.showDiff, Print: e.Print})
	}
	if e.Active == "" {
		e.Active = agents.Claude
	}
	if e.Active != agents.Claude && e.Active != agents.Codex {
		e.Close()
		return nil, &ConfigError{fmt.Sprintf("unknown agent %q: choose claude or codex", e.Active)}
	}
	if e.Diet == "" {
		e.Diet = diet.Default
	}
	if _, ok := diet.Profiles[e.Diet]; !ok {
		e.Close()
		return nil, &ConfigError{fmt.Sprintf("unknown diet profile %q: choose %s", e.Diet, strings.Join(diet.Names, ", "))}
	}
	if e.runner == nil {
		e.runner = AgentsRunner{}
	}
	if e.getenv == nil {
		e.getenv = os.Getenv
	}
	if e.now == nil {
		e.now = time.Now
	}
	e.planMD = planDoc{dir: sd, now: e.now}
	e.lock = runlock.New(root, sd, lg != nil, e.now, e.Say)
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	e.out = newPrinter(out, cfg.Color, cfg.Spinner)
	pv := e.pv
	pv.out, pv.runner, pv.wt, pv.convs, pv.lock, pv.now, pv.say, pv.emit = e.out, e.runner, e.wt, &e.convs, e.lock, e.now, e.Say, e.emit
	pv.passEnv = func() []string { return e.passEnv }
	return e, nil
}

// Close stops a running refresh of the panel's git facts and closes the
// conversation log.
func (e *Engine) Close() error {
	e.repo.Close()
	if e.wt != nil {
		e.wt.Close()
	}
	if e.log == nil {
		return nil
	}
	return e.log.Close()
}

// ReadOnly reports whether the engine writes nothing (Config.ReadOnly).
func (e *Engine) ReadOnly() bool { return e.log == nil }

// SetTerminal replaces the terminal used for confirmations.
func (e *Engine) SetTerminal(t Terminal) { e.pv.term = t }

// Last returns the latest agent run, or nil.
func (e *Engine) Last() *reports.LastRun { return e.last }

// LogPath is the conversation log's path ("" outside a repository).
func (e *Engine) LogPath() string {
	if e.log == nil {
		if e.Root == "" {
			return ""
		}
		return workspace.LogPath(e.Root)
	}
	return e.log.Path()
}

// maxEventText caps an event's text (a 1 MB input line stays one event
// under the log's line cap, events.MaxLineBytes); the full text of a long
// prompt is kept in .ai-session/prompts/ by the preview.
const maxEventText = 8000

// emit appends an event; a failure to log is reported once, never fatal.
// The kind is the meta's (one type per kind: events.CommandMeta,
// events.StatusMeta, ...); it returns the event's id.
func (e *Engine) emit(role events.Role, text string, refs map[string]string, meta events.Meta) string {
	id, err := e.appendEvent(role, text, refs, meta)
	if err != nil {
		e.logWarn.Do(func() { e.out.say(events.RoleRelayBaton, "warning: %v", err) })
	}
	return id
}

// LogErr is the first failure to append to the conversation log (a full
// disk), or nil: a command that could not record what it did says so and
// exits non-zero.
func (e *Engine) LogErr() error {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	return e.logErr
}

// appendEvent appends an event and returns its id and the append's error
// (also kept as LogErr), without the warning emit prints.
func (e *Engine) appendEvent(role events.Role, text string, refs map[string]string, meta events.Meta) (string, error) {
	if len(text) > maxEventText {
		r := []rune(text)
		if len(r) > maxEventText {
			text = string(r[:maxEventText]) + fmt.Sprintf("… (%d chars in all)", len(r))
		}
	}
	ev := events.NewWithMeta(e.SessionID, role, text, meta)
	if e.log == nil { // read-only: nothing is recorded
		return ev.ID, nil
	}
	ev.TS = e.now().UTC().Format(events.TimeFormat)
	ev.Refs = refs
	err := e.log.Append(ev)
	if err != nil {
		e.logMu.Lock()
		if e.logErr == nil {
			e.logErr = err
		}
		e.logMu.Unlock()
	}
	return ev.ID, err
}

// Say prints a relay-baton line.
func (e *Engine) Say(format string, a ...any) { e.out.say(events.RoleRelayBaton, format, a...) }

// EditText opens text in $VISUAL or $EDITOR (split on spaces, run without
// a shell), else in the first of editor, vi and nano on PATH, and returns
// the edited text (preview.EditText).
func EditText(text string, getenv func(string) string, dir string, in io.Reader, out, errw io.Writer) (string, error) {
	return preview.EditText(text, getenv, dir, in, out, errw)
}

// summary shortens s to one line of at most n runes for event text: the
// one truncation helper.
var summary = render.Cut

// MissingAgents says, one line each, which agent CLI cannot be found and
// how to install it (the room's first screen says so before any preview).
func (e *Engine) MissingAgents() []string {
	var lines []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		_, err := e.runner.Prepare(agents.Request{Agent: a, Role: agents.RoleAsk, Prompt: "x", Dir: e.Root})
		if !errors.Is(err, agents.ErrNotFound) {
			continue
		}
		l := err.Error()
		if a == e.Active {
			l = "the active agent: " + l
		}
		lines = append(lines, l)
	}
	return lines
}
