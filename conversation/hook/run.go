// Package hook is the runtime of relay-baton's hooks (`relay-baton hook
// stop|wait|prompt-submit|session-start|notify`): it tells the mode of the
// session that runs the hook (Detect), reads and checks the payload on
// stdin, finds the hook's workspace, opens the session and runs the
// hook's decision (conversation's HookStop, HookWait, ...) within the
// hook's time (Run, RunBounded).
package hook

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/workspace"
)

// maxPayload caps what a hook reads from stdin (last_assistant_message can
// be long).
const maxPayload = 8 << 20

// DefaultWaiterTimeout is `hook wait`'s default --timeout: under the
// hook's own timeout by WaiterMargin.
var DefaultWaiterTimeout = DefaultWaitTimeout - WaiterMargin(DefaultWaitTimeout)

// readSession reads the payload of hook sub and opens its session;
// ok=false for anything unusable (junk, empty, a bad id, another hook
// event: recorded in errors.log): the hook then stays silent.
func readSession(in io.Reader, sub string) (conversation.HookPayload, *conversation.Session, bool) {
	var p conversation.HookPayload
	// One-shot print-mode sessions and relay-baton's own agent runs are
	// not served: return at once (a waiter would stall them).
	env := Current()
	if in == nil || Skip(env, in) {
		return p, nil, false
	}
	b, err := io.ReadAll(io.LimitReader(in, maxPayload+1))
	if err != nil {
		return p, nil, false
	}
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	p, ws, ok := decodePayload(b, projectDir)
	if !ok {
		return p, nil, false
	}
	p.Process = env.Process
	if projectDir == "" {
		ws = Workspace(ws, p.SessionID)
	}
	s, err := conversation.OpenSession(ws, p.SessionID)
	if err != nil {
		return p, nil, false
	}
	if err := CheckEvent(sub, p.HookEventName); err != nil {
		s.RecordError(err)
		return p, nil, false
	}
	return p, s, true
}

// decodePayload decodes a hook payload and picks its workspace:
// projectDir (CLAUDE_PROJECT_DIR) when set, else the payload's cwd. ok=false
// when the payload is over maxPayload, not JSON, or names no absolute
// workspace.
func decodePayload(b []byte, projectDir string) (p conversation.HookPayload, ws string, ok bool) {
	if len(b) > maxPayload || json.Unmarshal(b, &p) != nil {
		return p, "", false
	}
	ws = projectDir
	if ws == "" {
		ws = p.Cwd
	}
	if ws == "" || !filepath.IsAbs(ws) {
		return p, "", false
	}
	return p, ws, true
}

// Run runs the hook sub (stop, wait, prompt-submit, notify or
// session-start) on its payload in in, bounded: the Stop,
// UserPromptSubmit and SessionStart hooks within Budget, the waiter by its
// own timeout, and any of them within a half second once ctx ends (a
// signal). woke reports the waiter's claim: the hook then exits 2, which
// wakes the session.
//
// failed is a Stop hook's conversation.ClaimFailure: the caller prints it
// on stderr and exits 1.
func Run(ctx context.Context, sub string, in io.Reader, out, errOut io.Writer, timeout time.Duration) (woke bool, failed error) {
	claudecode.SkipRegistry() // a hook never runs claude: its session recorded its own socket
	var wokeFlag atomic.Bool  // fn may still run when RunBounded gives up on it
	var failure atomic.Pointer[error]
	limit := Budget()
	if sub == "wait" {
		limit = 0 // bounded by its own timeout
	}
	RunBounded(ctx, limit, 500*time.Millisecond, func() {
		p, s, ok := readSession(in, sub)
		if !ok {
			return
		}
		switch sub {
		case "stop":
			if err := conversation.HookStop(ctx, s, p, out); err != nil {
				failure.Store(&err)
			}
		case "prompt-submit":
			conversation.HookPromptSubmit(s, p)
		case "session-start":
			conversation.HookSessionStart(s, p)
		case "notify":
			conversation.HookNotify(s, p)
		case "wait":
			wokeFlag.Store(conversation.HookWait(ctx, s, p, errOut, timeout))
		}
	})
	if p := failure.Load(); p != nil {
		failed = *p
	}
	return wokeFlag.Load(), failed
}

// Workspace is the workspace of a hook whose payload says cwd, when
// CLAUDE_PROJECT_DIR is not set: the nearest folder up from cwd that holds
// this session's chat folder, else workspace.Resolve(cwd) (the nearest
// folder with .claude/session-chat, else the git root, else cwd). Every hook
// resolves it the same way, so a session that cd'd into a sub-folder does
// not get a second chat folder there.
func Workspace(cwd, sessionID string) string {
	dir := filepath.Clean(cwd)
	if conversation.ValidSessionID(sessionID) == nil {
		for d := dir; ; {
			if fi, err := os.Lstat(filepath.Join(d, workspace.ChatDir, sessionID)); err == nil && fi.IsDir() {
				return d
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	if ws, err := workspace.Resolve(dir); err == nil {
		return ws
	}
	return dir
}
