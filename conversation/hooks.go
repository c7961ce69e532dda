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
	"syscall"
	"time"

	"github.com/relay-baton/relay-baton/procfacts"
)

// This file holds the hooks' decisions: what the Stop hook, the asyncRewake
// waiter, the UserPromptSubmit and SessionStart hooks do with a session
// and its payload. Package hook is their runtime: it reads the payload,
// tells the session's mode, opens the session and bounds the hook's time
// (hook.Run).

// HookPayload is the part of a Claude Code (or Codex) hook payload the
// hooks' decisions use; package hook reads it from the hook's stdin.
type HookPayload struct {
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

	// Process is the session's process, as the hook found it (not in the
	// payload; zero when unknown).
	Process procfacts.Process `json:"-"`
}

// busyFresh: a busy mark younger than this is this process's own.
const busyFresh = 30 * time.Second

// HookStop is the Stop hook's decision for session s, given its payload:
// it stores the turn's last text as the reply of the messages the turn
// answered (storeReplies); then, when messages wait, it posts them to the
// session's messaging socket when there is one, else claims one and
// writes {"decision":"block","reason":<framed message>} to out as one
// write; silent when the inbox is empty or stop_hook_active is true (and
// no socket). Its empty-inbox path is two directory reads and two unlinks
// (the busy and attention marks). A message that is waiting but cannot be
// claimed (a full disk, a folder that is not writable) is not silent: the
// error returned (a *ClaimFailure) says so, for the hook's stderr (Claude
// Code shows it as the hook's error); the message stays in the inbox. ctx
// bounds the post to the messaging socket.
func HookStop(ctx context.Context, s *Session, p HookPayload, out io.Writer) error {
	// The turn that ends answered the messages that reached it: their
	// reply is this turn's last text.
	storeReplies(s, p.LastAssistantMessage)
	s.clearAttention()
	has, err := s.hasPending()
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
	if _, err := socketLane(s, ctx, procfacts.System, mayRun); err == nil {
		if n, err := s.deliverSocket(ctx, p.TranscriptPath); n > 0 && err == nil || errors.Is(err, errAwaitingAnswer) {
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
		_ = res.abandon(err)
		return nil
	}
	_ = res.Delivered()
	_ = markAnswering(s, res.Message.ID)
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
func HookPromptSubmit(s *Session, p HookPayload) {
	// In stream-json mode the first prompt's UserPromptSubmit can run
	// before the SessionStart hook has created the folder: create it here.
	err := s.Ensure()
	if err == nil {
		err = s.MarkBusy()
	}
	s.clearAttention()
	if err == nil {
		err = s.RecordProcess(p.Process)
	}
	if err != nil {
		s.RecordError(fmt.Errorf("hook prompt-submit: %w", err))
		return
	}
	recordSocketFromEnv(s, os.Getenv, p.Process, p.PermissionMode, false)
	// A message from the messaging socket reaches the model now (a new
	// turn, or taken in at a tool result): this turn's end is its reply.
	for _, id := range chatIDs(p.Prompt) {
		_ = markAnswering(s, id)
	}
}

// HookSessionStart is the SessionStart hook: it registers the session
// (transcript path, cwd) and creates its inbox.
func HookSessionStart(s *Session, p HookPayload) {
	_ = s.Ensure()
	s.clearAttention()
	if err := s.RecordProcess(p.Process); err != nil {
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
	recordSocketFromEnv(s, os.Getenv, p.Process, "", true)
	// A busy mark left by a previous process of this session (killed
	// mid-turn) would hold the idle lane back: drop it. Not after a
	// compaction (it can happen mid-turn), and not a fresh mark: the first
	// prompt's UserPromptSubmit may run before this hook.
	if p.Source != "compact" {
		_ = s.clearBusyOlderThan(busyFresh)
	}
}

// HookWait is the asyncRewake waiter: while the session is idle it waits up
// to timeout for a message, claims it and writes its framed text to errOut;
// woke reports a claim (the hook then exits 2, which wakes the session).
// Nothing is claimed when another waiter is armed, when the session's
// process ends or when ctx ends.
func HookWait(ctx context.Context, s *Session, p HookPayload, errOut io.Writer, timeout time.Duration) (woke bool) {
	if err := s.Ensure(); err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return false
	}
	_ = s.RecordProcess(p.Process)
	lock, ok, err := s.lockWaiter()
	if err != nil {
		s.RecordError(fmt.Errorf("hook wait: %w", err))
		return false
	}
	if !ok {
		return false // another waiter is armed
	}
	defer lock.Release()
	// A waiter outliving its session would hold the lock for nothing.
	alive, stop := procfacts.WhileAlive(ctx, p.Process, procfacts.System, 0)
	defer stop()
	ctx, cancel := context.WithTimeout(alive, timeout)
	defer cancel()
	// With a messaging socket the socket lane goes first: the waiter posts
	// to it and keeps waiting; only what the socket refuses wakes the
	// session by the waiter's own exit. A usable socket with nothing to
	// post this round also claims nothing by rewake: a message that lands
	// between the two looks goes by the socket on the next round.
	prefer := func() bool {
		_, err := s.deliverSocket(ctx, p.TranscriptPath)
		if errors.Is(err, errAwaitingAnswer) {
			return true // a message posted to the socket is about to start a turn: the next waits for its end
		}
		if err != nil && !errors.Is(err, errNoSocket) && !errors.Is(err, ErrSocketHeld) && !errors.Is(err, errSocketDrops) {
			s.RecordError(fmt.Errorf("hook wait: the messaging socket: %w; waking the session instead", err))
		}
		return err == nil
	}
	res, err := s.waitClaimWith(ctx, LaneRewake, true, 0, ClaimOptions{Handover: true, Transcript: p.TranscriptPath, Prefer: prefer})
	if err != nil {
		if ctx.Err() == nil {
			s.RecordError(fmt.Errorf("hook wait: %w", err))
		}
		return false
	}
	if _, err := io.WriteString(errOut, s.Frame(res.Message)+"\n"); err != nil {
		_ = res.abandon(err)
		return false
	}
	_ = res.Delivered()
	_ = markAnswering(s, res.Message.ID)
	return true
}
