package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/subprocess"
)

// KeyVars are the agents' API-key variables (OwnKeyVars): held back from
// an agent's environment unless Request.AllowAPIKeyEnv, and then passed to
// their own agent only. The CLIs authenticate with their own login.
var KeyVars = append(append([]string(nil), OwnKeyVars[Claude]...), OwnKeyVars[Codex]...)

// Binary environment variables and install hints.
const (
	ClaudeBinEnv = "RELAY_BATON_CLAUDE"
	CodexBinEnv  = "RELAY_BATON_CODEX"
)

// Grace is how long a cancelled agent gets between SIGTERM and SIGKILL to
// its process group; it also bounds how long output pipes are drained after
// the agent exits (orphaned grandchildren holding them open). Under a
// second, so that relay-baton ends within a second of SIGTERM even when the
// agent ignores it.
var Grace = 500 * time.Millisecond

// MaxLine caps one output line; a longer line is reported as an ActRaw
// note and skipped, never fatal.
const MaxLine = 16 << 20

// readOnlyTools are denied outright for read-only claude roles, on top of
// plan mode (which already refuses writes and unapproved Bash).
const readOnlyDenied = "Write,Edit,NotebookEdit"

// Prepare resolves the binary and builds the exact argv, environment and
// policy for req, without starting anything. The room shows it as the
// preview; Run starts exactly this. When the binary is missing it returns
// the invocation all the same (argv names the binary as configured, Path
// is empty) with an error wrapping ErrNotFound, so that the preview can be
// shown before saying how to install it.
func Prepare(req Request) (Invocation, error) {
	var inv Invocation
	switch req.Agent {
	case Claude, Codex:
	default:
		return inv, fmt.Errorf("unknown agent %q (want %q or %q)", req.Agent, Claude, Codex)
	}
	switch req.Role {
	case RolePlanner, RoleReviewer, RoleExecutor, RoleAsk:
	default:
		return inv, fmt.Errorf("unknown role %q (want planner, reviewer, executor or ask)", req.Role)
	}
	dir := req.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return inv, fmt.Errorf("agent %s: %w", req.Agent, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return inv, fmt.Errorf("agent %s: working directory %s is not a directory", req.Agent, dir)
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return inv, err
	}
	env := mergeEnv(os.Environ(), append(req.Env[:len(req.Env):len(req.Env)], AgentRunEnv+"=1"))
	path, name, binErr := resolveBinary(req.Agent, env)
	inv.Path, inv.Dir, inv.Config, inv.ConfigIgnored = path, dir, cfg.Path, cfg.Ignored
	if req.Resume != "" && !validConversationID(req.Resume) {
		return inv, fmt.Errorf("agent %s: cannot continue conversation %q: not a session or thread id (start a new one)", req.Agent, req.Resume)
	}
	inv.Resume = req.Resume
	if bad := NotAllowedArgs(req.Agent, cfg.Args(req.Agent)); len(bad) > 0 { // LoadConfig refused them already: a second lock
		return inv, fmt.Errorf("agent %s: %s: arguments not allowed %s", req.Agent, cfg.Path, JoinRefused(bad))
	}
	ucfg, err := LoadUserConfig()
	if err != nil {
		return inv, err
	}
	inv.Extra = append([]string(nil), cfg.Args(req.Agent)...)
	inv.UserExtra, inv.UserConfig = append([]string(nil), ucfg.Args(req.Agent)...), ucfg.Path
	extra := append(append([]string(nil), inv.Extra...), inv.UserExtra...)
	readOnly := req.Role != RoleExecutor
	switch req.Agent {
	case Claude:
		inv.Argv = []string{name, "-p", "--output-format", "stream-json", "--verbose"}
		if readOnly {
			inv.Argv = append(inv.Argv, "--permission-mode", "plan", "--disallowedTools", readOnlyDenied)
			inv.Policy = "read-only: --permission-mode plan, " + readOnlyDenied + " denied"
		} else {
			inv.Argv = append(inv.Argv, "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
			inv.Policy = "edits: --permission-mode acceptEdits, Bash allowed"
		}
		ct := CheckClaudeTrust(dir, env)
		inv.ClaudeSettings = ClaudeSettingsLine(ct)
		if !ct.Trusted {
			inv.Argv = append(inv.Argv, ClaudeUntrustedArgs...)
		}
		inv.Argv = append(inv.Argv, extra...)
		if req.Resume != "" {
			inv.Argv = append(inv.Argv, "--resume", req.Resume)
		}
		inv.Argv = append(inv.Argv, "--", req.Prompt)
	case Codex:
		sandbox := "workspace-write"
		if readOnly {
			sandbox = "read-only"
		}
		inv.Argv = []string{name, "exec", "--json", "--sandbox", sandbox, "-C", dir}
		inv.Argv = append(inv.Argv, extra...)
		if req.Resume != "" {
			// exec's options (sandbox, -C, config) come before the
			// subcommand: `codex exec resume` itself takes no --sandbox.
			inv.Argv = append(inv.Argv, "resume", req.Resume)
		}
		inv.Argv = append(inv.Argv, "--", req.Prompt)
		inv.Policy = "sandbox " + sandbox
	}
	if bad := ForbiddenArgs(inv.Argv[1 : len(inv.Argv)-1]); len(bad) > 0 {
		return inv, fmt.Errorf("agent %s: refusing forbidden arguments %s", req.Agent, strings.Join(bad, ", "))
	}
	d := envPolicy(req.Agent, env, req.AllowAPIKeyEnv, append(append([]string(nil), cfg.AllowEnv...), req.AllowEnv...))
	inv.Env, inv.Stripped, inv.Passed = d.env, d.held, d.passed
	inv.Timeout = req.Timeout
	if inv.Timeout <= 0 {
		inv.Timeout = cfg.Timeout
	}
	if inv.Timeout <= 0 {
		inv.Timeout = DefaultTimeout
	}
	return inv, binErr
}

// validConversationID reports whether id can be a claude session id or a
// codex thread id (a UUID-like word): it is passed as an argument, so it
// must not look like a flag.
func validConversationID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '-' {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// resumeFailure reports whether a stderr line says the CLI could not
// continue the conversation it was asked to resume (messages of claude
// 2.1.328 and codex 0.169.0).
func resumeFailure(line string) bool {
	return strings.Contains(line, "No conversation found with session ID") ||
		strings.Contains(line, "no rollout found for thread id") ||
		strings.Contains(line, "thread/resume failed")
}

// resolveBinary finds the agent's binary: $RELAY_BATON_CLAUDE /
// $RELAY_BATON_CODEX, else claude / codex on PATH.
func resolveBinary(agent string, env []string) (path, name string, err error) {
	envName, pkg := ClaudeBinEnv, "@anthropic-ai/claude-code"
	if agent == Codex {
		envName, pkg = CodexBinEnv, "@openai/codex"
	}
	name = lookupEnv(env, envName)
	fromEnv := name != ""
	if !fromEnv {
		name = agent
	}
	p, lerr := lookPath(name, lookupEnv(env, "PATH"))
	if lerr != nil {
		if fromEnv {
			return "", name, &notFoundError{fmt.Sprintf("%s is not installed at %s=%s: no executable there (fix the variable, or unset it to use %s on PATH; install the CLI with `npm install -g %s`)", agent, envName, name, agent, pkg)}
		}
		return "", name, &notFoundError{fmt.Sprintf("%s is not installed: no `%s` on PATH (install it with `npm install -g %s` and log in once, or set %s to its path)", agent, agent, pkg, envName)}
	}
	return p, name, nil
}

// notFoundError is a missing agent binary: its message says how to get it.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// lookPath is exec.LookPath against the child's PATH.
func lookPath(name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// mergeEnv lays over onto base: a later KEY=VALUE replaces an earlier one.
func mergeEnv(base, over []string) []string {
	idx := map[string]int{}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range append(append([]string(nil), base...), over...) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if i, seen := idx[k]; seen {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// AuditEvent is the conversation event that records credential variables
// passed to an agent on purpose (--allow-api-key-env, --allow-env, the
// trusted config's allowEnv; names only), or false when none were passed.
func AuditEvent(sessionID, agent string, passed []string) (events.Event, bool) {
	if len(passed) == 0 {
		return events.Event{}, false
	}
	return events.NewWithMeta(sessionID, events.RoleRelayBaton,
		fmt.Sprintf("credential environment passed to %s: %s", agent, strings.Join(passed, ", ")),
		events.AuditMeta{Agent: agent, Vars: append([]string(nil), passed...)}), true
}

// Run starts the agent, streams its activity to req.OnActivity, and waits.
// It never panics and always returns a Result whose Summary says what
// happened in one line; Err is set when the run did not succeed.
func Run(ctx context.Context, req Request) (res Result) {
	start := time.Now()
	res = Result{Agent: req.Agent, ExitCode: -1}
	label := strings.TrimSpace(req.Agent + " " + string(req.Role))
	defer func() {
		if r := recover(); r != nil {
			res.Err = fmt.Errorf("agent %s: internal error: %v", req.Agent, r)
			res.Summary = label + " failed: " + res.Err.Error()
		}
		res.Duration = time.Since(start)
	}()
	inv, err := Prepare(req)
	if err != nil {
		res.Err = err
		res.Summary = label + ": " + agentmsg.FirstLine(err.Error())
		return res
	}
	res.Stripped, res.Passed = inv.Stripped, inv.Passed

	var clog *commandLog
	if req.SessionDir != "" {
		clog, err = openCommandLog(req.SessionDir)
		if err != nil {
			res.Err = err
			res.Summary = label + ": " + agentmsg.FirstLine(err.Error())
			return res
		}
		defer clog.Close()
		clog.start(inv.Argv)
	}

	runCtx, cancel := context.WithTimeout(ctx, inv.Timeout)
	defer cancel()
	o := newRunOutput(req, clog)
	st, waitErr := subprocess.Run(runCtx, subprocess.Cmd{Path: inv.Path, Args: inv.Argv, Dir: inv.Dir, Env: inv.Env,
		Stdout: o.stdout, Stderr: o.stderr, Grace: Grace, OnStart: req.OnStart})
	o.close()
	if st == nil && waitErr != nil {
		res.Err = fmt.Errorf("agent %s: start %s: %w", req.Agent, inv.Path, waitErr)
		res.Summary = label + ": " + agentmsg.FirstLine(res.Err.Error())
		clog.exit(-1)
		return res
	}
	res.ExitCode = st.ExitCode()
	clog.exit(res.ExitCode)
	out := o.parser.Outcome()
	res.FinalText, res.Usage, res.Session = out.FinalText, out.Usage, out.Session
	res.Duration = time.Since(start)
	r := ending{req: req, label: label, timeout: inv.Timeout, dur: res.Duration.Round(10 * time.Millisecond),
		out: out, waitErr: waitErr, o: o}
	r.judge(ctx, runCtx, &res)
	return res
}

// runOutput turns the agent's output into activity (stdout) and the lines
// a failed run is explained with (stderr), logging both raw.
type runOutput struct {
	parser         Parser
	stdout, stderr *subprocess.LineWriter
	stderrTail     tail
	resumeWhy      string // the CLI's words when req.Resume could not be continued
	cbPanic        any    // a panic in req.OnActivity: reported, output still drained
}

func newRunOutput(req Request, clog *commandLog) *runOutput {
	o := &runOutput{parser: NewParser(req.Agent)}
	deliver := req.OnActivity
	o.stdout = subprocess.Lines(MaxLine, func(line []byte, tooLong int) {
		clog.line("stdout", line, tooLong)
		var acts []events.Activity
		if tooLong > 0 {
			acts = []events.Activity{{Source: req.Agent, Kind: events.ActRaw, Text: fmt.Sprintf("(output line of %d bytes skipped: over the %d-byte limit)", tooLong, MaxLine)}}
		} else {
			acts = o.parser.Line(line)
		}
		if deliver == nil {
			return
		}
		now := time.Now()
		defer func() {
			if r := recover(); r != nil {
				o.cbPanic, deliver = r, nil
			}
		}()
		for _, a := range acts {
			if a.Time.IsZero() {
				a.Time = now
			}
			deliver(a)
		}
	})
	o.stderr = subprocess.Lines(MaxLine, func(line []byte, tooLong int) {
		clog.line("stderr", line, tooLong)
		if tooLong == 0 {
			o.stderrTail.add(string(line))
			if req.Resume != "" && o.resumeWhy == "" && resumeFailure(string(line)) {
				o.resumeWhy = oneLine(strings.TrimPrefix(strings.TrimSpace(string(line)), "Error: "), agentmsg.LineRunes)
			}
		}
	})
	return o
}

// close waits until every line was handled.
func (o *runOutput) close() {
	o.stdout.Close()
	o.stderr.Close()
}

// ending is what a finished run is judged on.
type ending struct {
	req     Request
	label   string
	timeout time.Duration
	dur     time.Duration
	out     Outcome
	waitErr error
	o       *runOutput
}

// judge sets res.Err, res.Summary and the run's flags from how it ended.
func (r ending) judge(ctx, runCtx context.Context, res *Result) {
	req, label, out, waitErr := r.req, r.label, r.out, r.waitErr
	failed := waitErr != nil || out.IsError || res.ExitCode != 0
	switch {
	case r.o.cbPanic != nil:
		res.Err = fmt.Errorf("agent %s: activity callback panicked: %v", req.Agent, r.o.cbPanic)
		res.Summary = label + " failed: " + oneLine(res.Err.Error(), agentmsg.LineRunes)
	case ctx.Err() != nil:
		res.Cancelled = true
		res.Err = fmt.Errorf("agent %s: %w", req.Agent, ctx.Err())
		res.Summary = fmt.Sprintf("%s cancelled after %s", label, r.dur)
	case runCtx.Err() != nil:
		res.TimedOut = true
		res.Err = fmt.Errorf("agent %s: timed out after %s: %w", req.Agent, r.timeout, context.DeadlineExceeded)
		res.Summary = fmt.Sprintf("%s timed out after %s (limit %s)", label, r.dur, r.timeout)
	case r.o.resumeWhy != "" && failed:
		res.ResumeFailed = true
		res.Err = fmt.Errorf("agent %s: conversation %s cannot be continued: %s", req.Agent, req.Resume, r.o.resumeWhy)
		res.Summary = fmt.Sprintf("%s exited %d after %s: conversation %s cannot be continued: %s", label, res.ExitCode, r.dur, req.Resume, r.o.resumeWhy)
	case failed:
		r.failure(res)
	default:
		res.Summary = fmt.Sprintf("%s ok in %s%s", label, r.dur, usageNote(out))
	}
	if out.Unreachable != "" && res.Err != nil && !res.ResumeFailed && !errors.Is(res.Err, ErrNotLoggedIn) {
		// Not a slow answer: the CLI never reached its API.
		res.Summary += "; it could not reach its API (" + out.Unreachable + ")"
		res.Err = fmt.Errorf("%w; it could not reach its API (%s)", res.Err, out.Unreachable)
	}
}

// failure explains a run the CLI ended with an error.
func (r ending) failure(res *Result) {
	req, label, waitErr := r.req, r.label, r.waitErr
	why := r.out.ErrorText
	if why == "" {
		why = r.o.stderrTail.last()
	}
	if why == "" && waitErr != nil {
		why = waitErr.Error()
	}
	if why == "" {
		why = "the CLI reported an error"
	}
	head := fmt.Sprintf("%s exited %d", label, res.ExitCode)
	if res.ExitCode == 0 {
		head = label + " failed"
	} else if res.ExitCode < 0 && waitErr != nil {
		head = fmt.Sprintf("%s ended (%s)", label, waitErr)
	}
	res.Err = fmt.Errorf("agent %s: %s", req.Agent, why)
	if me := missingEnv(req.Agent, why, res.Stripped); me != nil {
		// The CLI's own words were shown as activity: the summary names
		// the variable and what passes it.
		res.Err = me
		why = me.Error()
	} else if r.out.NotLoggedIn || notLoggedInText(req.Agent, why) {
		res.Err = &LoginError{Agent: req.Agent}
		why = res.Err.Error()
	}
	res.Summary = fmt.Sprintf("%s after %s: %s", head, r.dur, why)
}

// usageNote is " ($0.0123, 1200 in / 340 out)" when usage is known.
func usageNote(o Outcome) string {
	if !o.HasUsage {
		return ""
	}
	var parts []string
	if o.Usage.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", o.Usage.CostUSD))
	}
	parts = append(parts, fmt.Sprintf("%d in / %d out tokens", o.Usage.InputTokens+o.Usage.CachedInputTokens, o.Usage.OutputTokens))
	return " (" + strings.Join(parts, ", ") + ")"
}

// tail keeps the last few stderr lines, for the summary of a failed run.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > 8 {
		t.lines = t.lines[1:]
	}
}

// last is the last stderr line that says something (not a known notice).
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.lines) - 1; i >= 0; i-- {
		l := t.lines[i]
		if strings.HasPrefix(l, "Reading additional input from stdin") || strings.HasPrefix(l, "WARNING: proceeding") {
			continue
		}
		return oneLine(l, agentmsg.LineRunes)
	}
	return ""
}
