package conversation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/subprocess"
	"github.com/relay-baton/relay-baton/transcript"
)

// This file makes running Codex CLI sessions (threads) chat targets, on the
// same inbox protocol as Claude Code sessions: the chat folder is
// .claude/session-chat/<thread id>/, the Stop hook (`relay-baton hook stop`,
// which reads Codex's payload as it reads Claude Code's) claims at a turn
// boundary, and the queue lane hands a message to an idle, loaded thread
// with `codex queue --thread <id> --message <framed text>`. Replies are read
// from the thread's rollout file ($CODEX_HOME/sessions/YYYY/MM/DD/
// rollout-<time>-<thread id>.jsonl), parsed by transcript.ParseRolloutLine.

// Agent names of a Target.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// LaneQueue is the lane of a message handed to an idle Codex session with
// `codex queue`.
const LaneQueue Lane = "queue"

// IsCodex reports whether s is a Codex thread: its transcript is a rollout.
func (s *Session) IsCodex() bool {
	return transcript.IsRolloutPath(LocateTranscript(s))
}

// codexTargetAge: a Codex thread whose rollout was last written longer ago
// is not listed as a target (unless a running codex holds it, or it has a
// chat folder in the workspace).
const codexTargetAge = 7 * 24 * time.Hour

// withCodexThreads adds the workspace's Codex threads to out (the Claude
// Code targets ListTargets found): every rollout whose session_meta cwd is
// the workspace or inside it. A thread that already has a chat folder is
// completed in place. Codex targets are chat-capable when their inbox
// exists (the hooks are installed) or when the thread is loaded (the queue
// lane reaches it; Send creates the folder).
//
// A Codex thread is Live while a codex process holds its writer lock
// (codex.Loaded), else Ended; without all, only live threads are kept.
func withCodexThreads(ws string, out []Target, now time.Time, all bool) []Target {
	idx := map[string]int{}
	for i := range out {
		idx[out[i].SessionID] = i
		if out[i].Agent == "" {
			out[i].Agent = AgentClaude
			if transcript.IsRolloutPath(out[i].TranscriptPath) {
				out[i].Agent = AgentCodex
			}
		}
	}
	// Only recent or loaded rollouts of this workspace become new targets
	// (a CODEX_HOME can hold thousands of old ones).
	seen := codex.Rollouts(now, codexTargetAge, func(id string) bool { _, ok := idx[id]; return ok }, func(cwd string) bool { return inWorkspace(ws, cwd) })
	for i := range out {
		if out[i].Agent != AgentCodex {
			continue
		}
		if p, ok := seen[out[i].SessionID]; ok && out[i].TranscriptPath == "" {
			out[i].TranscriptPath = p
		}
		delete(seen, out[i].SessionID)
		codexState(ws, &out[i], now)
	}
	for id, p := range seen {
		if i, ok := idx[id]; ok {
			// A chat folder whose registration did not name the rollout.
			out[i].Agent, out[i].TranscriptPath = AgentCodex, p
			codexState(ws, &out[i], now)
			continue
		}
		t := Target{SessionID: id, Agent: AgentCodex, TranscriptPath: p}
		if m, ok := codex.ReadRolloutMeta(p); ok {
			if s, err := OpenSession(ws, id); codex.ExecRun(m) && (err != nil || !s.ChatCapable()) {
				// A one-shot `codex exec` run no hook registered (relay-baton's
				// own agent runs among them): like a `claude -p` run, never a
				// target.
				continue
			}
			t.Cwd = m.Cwd
		}
		codexState(ws, &t, now)
		out = append(out, t)
	}
	if all {
		return out
	}
	keep := out[:0]
	for _, t := range out {
		if t.Agent != AgentCodex || t.State == procfacts.Live {
			keep = append(keep, t)
		}
	}
	return keep
}

// codexState fills in a Codex target's state from its rollout, its writer
// lock and its chat folder.
func codexState(ws string, t *Target, now time.Time) {
	if fi, err := os.Stat(t.TranscriptPath); err == nil && fi.ModTime().After(t.LastActivity) {
		t.LastActivity = fi.ModTime()
	}
	if t.Cwd == "" {
		if m, ok := codex.ReadRolloutMeta(t.TranscriptPath); ok {
			t.Cwd = m.Cwd
		}
	}
	t.Loaded = codex.Loaded(t.SessionID)
	t.State, t.PID = procfacts.Ended, 0
	if t.Loaded {
		t.State = procfacts.Live
		if codex.TUIGone(t.SessionID, t.Cwd) {
			// Only the app-server daemon holds it: nobody sees it.
			t.State, t.TUIQuit = procfacts.Ended, true
		}
	}
	t.Busy = t.Busy || codex.InTurn(t.TranscriptPath, now, busyTTL)
	t.Waiting = t.Loaded && !t.TUIQuit && !t.Busy // the queue lane reaches it at once
	if !t.ChatCapable && t.Loaded {
		t.ChatCapable = true
	}
	if s, err := OpenSession(ws, t.SessionID); err == nil && s.ChatCapable() {
		t.ChatCapable = true
		q, _ := s.Queue()
		t.Depth, t.Oldest = q.Depth, q.Oldest
	}
}

// inWorkspace reports whether dir is ws or inside it.
func inWorkspace(ws, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(ws, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// queueTimeout bounds one `codex queue` run.
const queueTimeout = 30 * time.Second

// deliverQueue is the queue lane: when s is a Codex thread that is loaded
// and not in a turn, it claims the oldest message (the same rename into
// delivered/ as the other lanes, so a message goes out once) and hands its
// framed text to `codex queue --thread <id> --message <text>`. The claim is
// a hand-over claim, like the hooks': its marker in claims/ is held while
// codex runs, so a relay-baton killed meanwhile leaves the message
// incomplete, and the next lane (or recoverClaims) puts it back in the inbox;
// once codex has queued it, the rollout confirms the delivery (see
// claims.go). When codex fails, the message goes back into the inbox at
// once, first in line. ok reports a delivery. A busy or unloaded thread is
// left alone (the Stop hook delivers at the turn's end; an unloaded thread
// has nobody to answer).
func deliverQueue(ctx context.Context, s *Session) (ok bool, err error) {
	rollout, has, err := pendingForRollout(s)
	if err != nil || !has {
		return false, err
	}
	if s.Busy(time.Now()) || codex.InTurn(rollout, time.Now(), busyTTL) || !codex.Loaded(s.ID) {
		return false, nil
	}
	bin := codex.Binary()
	if bin == "" {
		return false, errors.New("codex CLI not found (set RELAY_BATON_CODEX or put codex on PATH): the message stays queued for the session's Stop hook")
	}
	res, err := s.ClaimWith(LaneQueue, ClaimOptions{Handover: true, Transcript: rollout})
	if err != nil || !res.OK {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, queueTimeout)
	defer cancel()
	out, err := subprocess.CombinedOutput(ctx, subprocess.Command(bin, "queue", "--thread", s.ID, "--message", s.Frame(res.Message)))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("stopped: %w (%w)", cerr, err) // Ctrl-C, a closed request, or queueTimeout
		}
		qerr := fmt.Errorf("codex queue for thread %s: %w: %s", s.ID, err, render.Cut(string(out), 300))
		if aerr := res.abandon(qerr); aerr != nil {
			qerr = fmt.Errorf("%w; putting message %s back into the inbox also failed: %v (its claim stays in claims/: the next lane settles it)", qerr, res.Message.ID, aerr)
		}
		s.RecordError(qerr)
		return false, qerr
	}
	_ = res.Delivered() // deliveredAt; a failure is in errors.log, and recoverClaims settles the claim
	return true, nil
}

// pendingForRollout finds the Codex session's rollout and whether its inbox
// holds a message: has is false when there is nothing to deliver, or no
// rollout to confirm a delivery in.
func pendingForRollout(s *Session) (rollout string, has bool, err error) {
	rollout = LocateTranscript(s)
	if !transcript.IsRolloutPath(rollout) {
		return "", false, nil
	}
	has, err = s.hasPending()
	return rollout, has && err == nil, err
}

// codexTUIQuit reports whether s is a Codex thread whose TUI has quit
// while a codex app-server daemon still holds it loaded: a message would
// be answered in a turn no terminal shows (Linux; see codexTUIGone).
func (s *Session) codexTUIQuit() bool {
	if !s.IsCodex() || !codex.Loaded(s.ID) {
		return false
	}
	cwd := ""
	if m, ok := codex.ReadRolloutMeta(LocateTranscript(s)); ok {
		cwd = m.Cwd
	}
	return codex.TUIGone(s.ID, cwd)
}
