package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/workspace"
)

// This file holds the hooks' decisions: what the Stop hook, the asyncRewake
// waiter, the UserPromptSubmit and SessionStart hooks do with a payload.
// package main only parses flags and calls RunHook (bounded, RunBounded).

// hookPayload is the part of a Claude Code hook payload the hooks use.
type hookPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	StopHookActive bool   `json:"stop_hook_active"`
	Source         string `json:"source"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	// Stop: the final text of the turn (its reply); UserPromptSubmit: the
	// prompt (a framed chat message from the messaging socket among them).
	LastAssistantMessage string `json:"last_assistant_message"`
	Prompt               string `json:"prompt"`
	// Notification: what the session waits for.
	NotificationType string `json:"notification_type"`
	Message          string `json:"message"`

	env HookEnv // the session's mode and process
}

// busyFresh: a busy mark younger than this is this process's own.
const busyFresh = 30 * time.Second

// maxPayload caps what a hook reads from stdin (last_assistant_message can
// be long).
const maxPayload = 8 << 20

// readHookSession reads the payload of hook sub and opens its session;
// ok=false for anything unusable (junk, empty, a bad id, another hook
// event: recorded in errors.log): the hook then stays silent.
func readHookSession(in io.Reader, sub string) (hookPayload, *Session, bool) {
	var p hookPayload
	// One-shot print-mode sessions and relay-baton's own agent runs are
	// not served: return at once (a waiter would stall them).
	env := CurrentHook()
	if in == nil || SkipHook(env, in) {
		return p, nil, false
	}
	b, err := io.ReadAll(io.LimitReader(in, maxPayload+1))
	if err != nil {
		return p, nil, false
	}
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	p, ws, ok := decodeHookPayload(b, projectDir)
	if !ok {
		return p, nil, false
	}
	p.env = env
	if projectDir == "" {
		ws = HookWorkspace(ws, p.SessionID)
	}
	s, err := OpenSession(ws, p.SessionID)
	if err != nil {
		return p, nil, false
	}
	if err := CheckHookEvent(sub, p.HookEventName); err != nil {
		s.RecordError(err)
		return p, nil, false
	}
	return p, s, true
}

// decodeHookPayload decodes a hook payload and picks its workspace:
// projectDir (CLAUDE_PROJECT_DIR) when set, else the payload's cwd. ok=false
// when the payload is over maxPayload, not JSON, or names no absolute
// workspace.
func decodeHookPayload(b []byte, projectDir string) (p hookPayload, ws string, ok bool) {
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

// HookStop is the Stop hook: it stores the turn's last text as the reply
// of the messages the turn answered (StoreReplies); then, when messages
// wait, it posts them to the session's messaging socket when there is
// one, else claims one and writes {"decision":"block","reason":<framed
// message>} to out as one write; silent when the inbox is empty,
// stop_hook_active is true (and no socket) or the payload is unusable.
// Its empty-inbox path is one payload decode, two directory reads and
// two unlinks (the busy and attention marks). A message that is waiting
// but cannot be claimed (a full disk, a folder that is not writable) is
// not silent: the error returned says so, for the hook's stderr (Claude
// Code shows it as the hook's error); the message stays in the inbox.
func HookStop(in io.Reader, out io.Writer) error {
	return hookStop(context.Background(), in, out)
}

// hookStop is HookStop; ctx bounds the post to the messaging socket
// (RunHook's: a signal ends it).
func hookStop(ctx context.Context, in io.Reader, out io.Writer) error {
	p, s, ok := readHookSession(in, "stop")
	if !ok {
		return nil
	}
	// The turn that ends answered the messages that reached it: their
	// reply is this turn's last text.
	s.StoreReplies(p.LastAssistantMessage)
	s.ClearAttention()
	has, err := s.HasPending()
	if err != nil || !has {
		if err != nil {
			s.RecordError(fmt.Errorf("hook stop: %w", err))
		}
		_ = s.ClearBusy()
		return nil
	}
	// A session with a messaging socket takes queued messages from it as
	// its next turns: no block (which its screen shows as a Stop hook
	// problem), and no cap on consecutive blocks holds the queue back.
	if _, err := s.socketLane(ctx, procfacts.System); err == nil {
		if n, err := s.DeliverSocket(ctx, p.TranscriptPath); n > 0 && err == nil || errors.Is(err, ErrAwaitingAnswer) {
			// Posted; or a message posted a moment ago has not reached the
			// model yet: it is the next turn, and the queued ones follow
			// it one per turn (no block that would hand two over at once).
			_ = s.ClearBusy()
			return nil
		} else if err != nil {
			s.RecordError(fmt.Errorf("hook stop: the messaging socket: %w; delivering by the Stop hook", err))
		}
	}
	if p.StopHookActive {
		// Already continuing because of a block: one block per turn.
		_ = s.ClearBusy()
		return nil
	}
	// Handover: the claim stays marked in progress until the block is
	// printed; a hook killed before that leaves the message to the next lane.
	res, err := s.ClaimWith(LaneHook, ClaimOptions{Handover: true, Transcript: p.TranscriptPath})
	if err != nil {
		s.RecordError(fmt.Errorf("hook stop: %w", err))
	}
	if !res.OK {
		_ = s.ClearBusy()
		if err != nil {
			return &ClaimFailure{Dir: s.InboxDir(), Err: err}
		}
		return nil
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", s.Frame(res.Message)})
	if _, err := io.WriteString(out, buf.String()); err != nil { // one line, one write
		_ = res.Abandon(err)
		return nil
	}
	_ = res.Delivered()
	_ = s.MarkAnswering(res.Message.ID)
	return nil
}

// ClaimFailure is a chat message that was waiting but could not be
// claimed: it is still in the inbox.
type ClaimFailure struct {
	Dir string // the inbox
	Err error
}

func (e *ClaimFailure) Error() string {
	next := "it is delivered at a later turn end"
	switch {
	case errors.Is(e.Err, syscall.ENOSPC), errors.Is(e.Err, syscall.EDQUOT):
		next = "the disk is full: free some space and it is delivered at the next turn end"
	case errors.Is(e.Err, syscall.EROFS), errors.Is(e.Err, fs.ErrPermission):
		next = "the folder is not writable: fix its mode or mount, and it is delivered at the next turn end"
	}
	return fmt.Sprintf("hook stop: a chat message is waiting but could not be claimed (%v); it stays queued in %s: %s", e.Err, e.Dir, next)
}

func (e *ClaimFailure) Unwrap() error { return e.Err }

// HookPromptSubmit is the UserPromptSubmit hook: it marks the session busy.
func HookPromptSubmit(in io.Reader) {
	p, s, ok := readHookSession(in, "prompt-submit")
	if !ok {
		return
	}
	// In stream-json mode the first prompt's UserPromptSubmit can run
	// before the SessionStart hook has created the folder: create it here.
	err := s.Ensure()
	if err == nil {
		err = s.MarkBusy()
	}
	s.ClearAttention()
	if err == nil {
		err = s.RecordProcess(p.env.Process)
	}
	if err != nil {
		s.RecordError(fmt.Errorf("hook prompt-submit: %w", err))
		return
	}
	s.recordSocketFromEnv(os.Getenv, p.env.Process, p.PermissionMode, false)
	// A message from the messaging socket reaches the model now (a new
	// turn, or taken in at a tool result): this turn's end is its reply.
	for _, id := range chatIDs(p.Prompt) {
		_ = s.MarkAnswering(id)
	}
}

// HookSessionStart is the SessionStart hook: it registers the session
// (transcript path, cwd) and creates its inbox.
func HookSessionStart(in io.Reader) {
	p, s, ok := readHookSession(in, "session-start")
	if !ok {
		return
	}
	_ = s.Ensure()
	s.ClearAttention()
	if err := s.RecordProcess(p.env.Process); err != nil {
		s.RecordError(fmt.Errorf("hook session-start: %w", err))
	}
	tp := p.TranscriptPath
	if tp != "" && !filepath.IsAbs(tp) {
		tp = ""
	}
	if err := s.Register(Registration{TranscriptPath: tp, Cwd: p.Cwd, Source: p.Source}); err != nil {
		s.RecordError(fmt.Errorf("hook session-start: %w", err))
	}
	// The session's messaging socket: the lane chosen first when it is
	// there; a process without one (messaging off) drops an old record.
	s.recordSocketFromEnv(os.Getenv, p.env.Process, "", true)
	// A busy mark left by a previous process of this session (killed
	// mid-turn) would hold the idle lane back: drop it. Not after a
	// compaction (it can happen mid-turn), and not a fresh mark: the first
	// prompt's UserPromptSubmit may run before this hook.
	if p.Source != "compact" {
		_ = s.ClearBusyOlderThan(busyFresh)
	}
}

// DefaultWaiterTimeout is `hook wait`'s default --timeout: under the
// hook's own timeout by WaiterMargin.
var DefaultWaiterTimeout = DefaultWaitTimeout - WaiterMargin(DefaultWaitTimeout)

// HookWait is the asyncRewake waiter: while the session is idle it waits up
// to timeout for a message, claims it and writes its framed text to errOut;
// woke reports a claim (the hook then exits 2, which wakes the session).
// Nothing is claimed when another waiter is armed, when the session's
// process ends or when ctx ends.
func HookWait(ctx context.Context, in io.Reader, errOut io.Writer, timeout time.Duration) (woke bool) {
	p, s, ok := readHookSession(in, "wait")
	if !ok {
		return false
	}
	if err := s.Ensure(); err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return false
	}
	_ = s.RecordProcess(p.env.Process)
	lock, ok, err := s.LockWaiter()
	if err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return false
	}
	if !ok {
		return false // another waiter is armed
	}
	defer lock.Release()
	// A waiter outliving its session would hold the lock for nothing.
	alive, stop := procfacts.WhileAlive(ctx, p.env.Process, procfacts.System, 0)
	defer stop()
	ctx, cancel := context.WithTimeout(alive, timeout)
	defer cancel()
	// With a messaging socket the socket lane goes first: the waiter posts
	// to it and keeps waiting; only what the socket refuses wakes the
	// session by the waiter's own exit. A usable socket with nothing to
	// post this round also claims nothing by rewake: a message that lands
	// between the two looks goes by the socket on the next round.
	prefer := func() bool {
		_, err := s.DeliverSocket(ctx, p.TranscriptPath)
		if errors.Is(err, ErrAwaitingAnswer) {
			return true // a message posted to the socket is about to start a turn: the next waits for its end
		}
		if err != nil && !errors.Is(err, ErrNoSocket) && !errors.Is(err, ErrSocketHeld) && !errors.Is(err, ErrSocketDrops) {
			s.RecordError(fmt.Errorf("hook wait: the messaging socket: %w; waking the session instead", err))
		}
		return err == nil
	}
	res, err := s.WaitClaimWith(ctx, LaneRewake, true, 0, ClaimOptions{Handover: true, Transcript: p.TranscriptPath, Prefer: prefer})
	if err != nil {
		if ctx.Err() == nil {
			s.RecordError(fmt.Errorf("hook wait: %w", err))
		}
		return false
	}
	if _, err := io.WriteString(errOut, s.Frame(res.Message)+"\n"); err != nil {
		_ = res.Abandon(err)
		return false
	}
	_ = res.Delivered()
	_ = s.MarkAnswering(res.Message.ID)
	return true
}

// RunHook runs the hook sub (stop, wait, prompt-submit, notify or session-start)
// on its payload in in, bounded: the Stop, UserPromptSubmit and
// SessionStart hooks within HookBudget, the waiter by its own timeout, and
// any of them within a half second once ctx ends (a signal). woke reports
// the waiter's claim: the hook then exits 2, which wakes the session.
//
// failed is a Stop hook's ClaimFailure: the caller prints it on stderr
// and exits 1.
func RunHook(ctx context.Context, sub string, in io.Reader, out, errOut io.Writer, timeout time.Duration) (woke bool, failed error) {
	registryOff.Store(true)  // a hook never runs claude: its session recorded its own socket
	var wokeFlag atomic.Bool // fn may still run when RunBounded gives up on it
	var failure atomic.Pointer[error]
	limit := HookBudget()
	if sub == "wait" {
		limit = 0 // bounded by its own timeout
	}
	RunBounded(ctx, limit, 500*time.Millisecond, func() {
		switch sub {
		case "stop":
			if err := hookStop(ctx, in, out); err != nil {
				failure.Store(&err)
			}
		case "prompt-submit":
			HookPromptSubmit(in)
		case "session-start":
			HookSessionStart(in)
		case "notify":
			HookNotify(in)
		case "wait":
			wokeFlag.Store(HookWait(ctx, in, errOut, timeout))
		}
	})
	if p := failure.Load(); p != nil {
		failed = *p
	}
	return wokeFlag.Load(), failed
}

// HookWorkspace is the workspace of a hook whose payload says cwd, when
// CLAUDE_PROJECT_DIR is not set: the nearest folder up from cwd that holds
// this session's chat folder, else workspace.Resolve(cwd) (the nearest
// folder with .claude/session-chat, else the git root, else cwd). Every hook
// resolves it the same way, so a session that cd'd into a sub-folder does
// not get a second chat folder there.
func HookWorkspace(cwd, sessionID string) string {
	dir := filepath.Clean(cwd)
	if ValidSessionID(sessionID) == nil {
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
