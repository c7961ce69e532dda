// Package agents runs Claude Code and Codex as subprocesses of their own CLIs
// (never an HTTP client of ours) and turns what they print into one stream of
// events.Activity. It also parses Claude Code session transcripts and Codex
// rollout files (rollout.go) into the same type, so every renderer reads one
// thing.
package agents

import (
	"errors"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// Agent names.
const (
	Claude = "claude"
	Codex  = "codex"
)

// Role is the job an agent run does; it decides the permission policy.
type Role string

// The roles. Planner, reviewer and ask runs must not change the repository
// (read-only tools / read-only sandbox); only the executor may edit.
const (
	RolePlanner  Role = "planner"
	RoleReviewer Role = "reviewer"
	RoleExecutor Role = "executor"
	RoleAsk      Role = "ask"
)

// Request describes one agent run.
type Request struct {
	Agent          string        // Claude or Codex
	Role           Role          // decides permissions / sandbox
	Prompt         string        // passed as one argv element, never through a shell
	Dir            string        // working directory (the repository root)
	SessionDir     string        // .ai-session folder; commands.log is appended there ("" = no log)
	Timeout        time.Duration // 0 = DefaultTimeout
	AllowAPIKeyEnv bool          // pass the agent's own API-key variables through (audited)
	// AllowEnv names credential-like variables to pass on purpose
	// (--allow-env NAME; audited), on top of the trusted config's allowEnv.
	AllowEnv []string
	// Env is laid over the parent's environment (KEY=VALUE; later entries
	// win) before the key policy is applied. RELAY_BATON_CLAUDE and
	// RELAY_BATON_CODEX are looked up here first.
	Env []string
	// OnActivity, when set, receives each activity as it is parsed, in order,
	// from one goroutine.
	OnActivity func(events.Activity)
	// OnStart, when set, is called once the process has started, with its
	// pid, which is also its process group id.
	OnStart func(pid int)
	// Resume continues an earlier conversation instead of starting one: a
	// claude session id (`claude -p --resume <id>`) or a codex thread id
	// (`codex exec resume <id>`). The role's permission policy is applied
	// to the resumed run as to a new one. "" starts a new conversation.
	Resume string
}

// AgentRunEnv is set to "1" in the environment of every agent run
// relay-baton starts (Prepare adds it after Request.Env, so nothing turns it
// off). Claude Code's hooks inherit the environment of the process that
// started claude, so relay-baton's own hooks see it and return at once: a
// print-mode run cannot be woken or chatted with, an asyncRewake waiter
// would stall it, and it must never be registered as a chat target.
const AgentRunEnv = "RELAY_BATON_AGENT_RUN"

// DefaultTimeout bounds a run when Request.Timeout is zero.
const DefaultTimeout = 30 * time.Minute

// Invocation is exactly what would be started: shown in previews.
type Invocation struct {
	Path     string   // resolved binary path
	Argv     []string // argv[0] is the binary as configured
	Dir      string
	Policy   string        // one line: permission mode / sandbox
	Stripped []string      // names of environment variables held back (credentials; present in our env)
	Passed   []string      // names of credential variables passed on purpose (AllowAPIKeyEnv, AllowEnv): audit them
	Env      []string      // the child's full environment (holds secrets: never log it)
	Timeout  time.Duration // the run's timeout (Request, else config, else DefaultTimeout)
	Config   string        // the .relay-baton.json read ("" when none)
	// Extra are the arguments added by the trusted .relay-baton.json
	// (also in Argv; only what AllowedFlags lists): every one is shown in
	// the preview.
	Extra []string
	// UserExtra are the arguments added by the user's own config
	// (UserConfigName, also in Argv, after Extra), from UserConfig: every
	// one is shown in the preview too.
	UserExtra  []string
	UserConfig string // the user's config read ("" when none)
	// ConfigIgnored is one line when a .relay-baton.json is present but
	// not used (not trusted, or changed since): why, and how to trust it.
	ConfigIgnored string
	Resume        string // the conversation continued (Request.Resume)
	// ClaudeSettings is one line for claude runs: whether the folder's
	// Claude Code project settings load (ClaudeSettingsLine); "" for codex.
	ClaudeSettings string
}

// Result is the outcome of a run.
type Result struct {
	Agent     string
	ExitCode  int // -1 when the process did not start or was killed
	Duration  time.Duration
	FinalText string // the agent's final answer
	Usage     events.Usage
	Cancelled bool
	TimedOut  bool
	Err       error    // why the run failed, if it did
	Summary   string   // one line: what happened
	Session   string   // claude session id / codex thread id, when reported
	Stripped  []string // names of credential variables held back from the child's env
	Passed    []string // names of credential variables passed on purpose (AllowAPIKeyEnv, AllowEnv): audit them
	// ResumeFailed: Request.Resume named a conversation the CLI could not
	// continue (deleted, expired, another machine's); Err says why. Nothing
	// was sent to the model.
	ResumeFailed bool
}

// ErrNotFound is wrapped by errors about a missing agent binary.
var ErrNotFound = errors.New("agent binary not found")
