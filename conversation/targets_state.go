package conversation

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// Status says where a message sent to t now would go, in a few words:
// "ended" or "unknown (no process recorded)" (its liveness), "busy"
// (delivered at the turn's end), "idle, waiter armed" (at once), "idle, not
// reachable" (at the next turn's end), "-" when t cannot chat; "ended (its
// TUI quit; ...)" for a Codex thread only a daemon holds; a live session
// whose socket dropped a message adds "(socket drops messages: delivered
// by hooks)". Every view of the targets (the page's state too) says it with
// these words.
func (t Target) Status() string {
	st := t.status()
	if t.SocketProblem != "" && t.State == procfacts.Live && t.ChatCapable {
		st += " (" + t.SocketProblem + ")"
	}
	return st
}

func (t Target) status() string {
	switch {
	case t.State == procfacts.Ended && t.TUIQuit:
		return "ended (its TUI quit; a codex daemon still holds it)"
	case t.State == procfacts.Ended:
		return "ended"
	case t.State == procfacts.Unknown:
		return "unknown (no process recorded)"
	case !t.ChatCapable:
		return "-"
	case t.NeedsUser != "":
		return "waiting for its user (" + t.NeedsUser + ")"
	case t.Socket && t.Busy:
		return "busy, socket: between tool calls"
	case t.Socket:
		return "idle, socket: at once"
	case t.Busy:
		return "busy"
	case t.Agent == AgentCodex && t.Waiting:
		return "idle (codex queue)"
	case t.Agent == AgentCodex:
		return "not loaded"
	case t.Waiting:
		return "idle, waiter armed"
	}
	return "idle, not reachable"
}

// lane is Target.Delivers.
func (t Target) lane() string {
	switch {
	case !t.ChatCapable:
		return ""
	case t.Socket:
		return string(LaneSocket)
	case t.Busy:
		return string(LaneHook)
	case t.Agent == AgentCodex && t.Waiting:
		return string(LaneQueue)
	case t.Agent == AgentCodex:
		return ""
	case t.Waiting:
		return string(LaneRewake)
	}
	return ""
}

// Reachability says where a message sent to s now would go, and when, in a
// sentence: the long form of Target.Status.
func (s *Session) Reachability(now time.Time) string {
	q, _ := s.Queue()
	queue := fmt.Sprintf("%d queued", q.Depth)
	if id, ok := s.awaitingAnswer(now, cachedOnly); ok && !s.IsCodex() {
		queue += fmt.Sprintf("; a new message waits until message %s is answered (one message per turn, each with its own reply)", id)
	} else if q.Depth > 0 {
		queue += fmt.Sprintf("; a new message waits behind %s (one message per turn, each with its own reply)", render.Count(q.Depth, "queued message"))
	}
	if s.IsCodex() {
		switch {
		case (s.Busy(now) || codex.InTurn(LocateTranscript(s), now, busyTTL)) && codex.ControlSocket() != "":
			return "in a turn: a message is delivered at its next tool call's end if the thread runs in the Codex TUI (turn/steer), else when the turn ends (Stop hook); " + queue
		case s.Busy(now) || codex.InTurn(LocateTranscript(s), now, busyTTL):
			return "in a turn: a message is delivered when the turn ends (Stop hook); " + queue
		case codex.Loaded(s.ID):
			return "idle: a message is delivered at once (codex queue); " + queue
		}
		return "not loaded in a running codex: a message waits until the thread runs again (Stop hook, or codex queue once it is loaded); " + queue
	}
	user := ""
	if a, ok := s.NeedsUser(LocateTranscript(s)); ok {
		user = "waiting for its user (" + a.What() + ": answer it in the session); "
	}
	_, serr := viewSocketLane(s)
	switch {
	case serr == nil && s.Busy(now):
		return user + "in a turn; delivers: socket, between tool calls (the message reaches the model with the result of the tool call that runs); " + queue
	case serr == nil:
		return user + "idle; delivers: socket, at once; " + queue
	case errors.Is(serr, ErrSocketHeld):
		user += "in bypassPermissions Claude Code holds a message from its socket for approval, so the hooks deliver; "
	case errors.Is(serr, errSocketDrops):
		if o, ok := s.socketOffState(); ok {
			if s.HooklessOnly() {
				// Reached through its socket alone (Claude Code's registry):
				// no hook lane is there to take the message back.
				return user + fmt.Sprintf("its messaging socket took message %s at %s and the session never showed it, and no relay-baton hooks are installed here: the message waits in the inbox; run 'relay-baton hook install', then restart or resume the session ('claude --resume %s'); ", o.MessageID, o.Since.Local().Format("15:04:05"), s.ID) + queue
			}
			user += fmt.Sprintf("its messaging socket took message %s at %s and the session never showed it, so the hooks deliver; ", o.MessageID, o.Since.Local().Format("15:04:05"))
		}
	}
	switch {
	case s.Busy(now):
		return user + "in a turn: a message is delivered when the turn ends (Stop hook); " + queue
	case s.Waiting():
		return user + "idle, waiter armed: a message is delivered at once (rewake); " + queue
	}
	return user + "idle, no waiter armed: a message waits for the session's next turn end (its waiter timed out, or it started before the hooks were installed); " + queue
}

// ClaudeHooksIn is the Claude Code settings file (project, local, then the
// user's) that holds relay-baton's chat hooks for ws, or "" when none does.
// A file that is not a regular one is not read (safeio.ReadRegular).
func ClaudeHooksIn(ws string) string {
	for _, scope := range []string{"project", "local", "user"} {
		path, err := workspace.SettingsPath(scope, ws)
		if err != nil {
			continue
		}
		if data, err := safeio.ReadRegular(path, 16<<20); err == nil && HoldsStopHook(data) {
			return path
		}
	}
	return ""
}

// execStopHook is the exec form of relay-baton's Stop hook entry,
// "args": ["hook", "stop"], however the file is indented; compiled on first
// use (the hooks' own start does not pay for it).
var execStopHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"args"\s*:\s*\[\s*"hook"\s*,\s*"stop"`)
})

// HoldsStopHook says whether a hooks settings file (Claude Code's
// settings.json, Codex's hooks.json) holds relay-baton's Stop hook, in
// shell form ("<binary> hook stop") or exec form ("args": ["hook", "stop"]).
func HoldsStopHook(data []byte) bool {
	return strings.Contains(string(data), " hook stop") || execStopHook().Match(data)
}
