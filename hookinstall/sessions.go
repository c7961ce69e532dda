package hookinstall

import (
	"errors"
	"strings"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/reports"
)

// CheckSessions is doctor's line per running session of root: which lanes
// reach it and why (its messaging socket, found through Claude Code's list
// of sessions or recorded by its hooks; the Stop hook and the rewake
// waiter, when its hooks ran; codex queue and steer for a Codex thread),
// and one line when Claude Code's list cannot be read.
func CheckSessions(root string) []reports.Check {
	if root == "" {
		return nil
	}
	var out []reports.Check
	if note := claudecode.RegistryNote(); note != "" {
		out = append(out, reports.Check{Name: "sessions (claude agents)", Status: reports.Warn, Detail: strings.TrimPrefix(note, "note: ")})
	}
	ts, err := conversation.ListTargets(root)
	if err != nil {
		return append(out, reports.Check{Name: "sessions", Status: reports.Warn, Detail: err.Error()})
	}
	if len(ts) == 0 {
		return append(out, reports.Check{Name: "sessions", Status: reports.OK, Detail: "no running Claude Code or Codex session in this repository"})
	}
	for _, t := range ts {
		out = append(out, reports.Check{Name: "session " + render.ShortID(t.SessionID), Status: reports.OK, Detail: sessionLanes(root, t)})
	}
	return out
}

// sessionLanes says which lanes reach t, and why the others do not.
func sessionLanes(root string, t conversation.Target) string {
	s, err := conversation.OpenSession(root, t.SessionID)
	if err != nil {
		return err.Error()
	}
	if t.Agent == conversation.AgentCodex {
		return "Codex thread: codex queue while idle, turn/steer in a turn on the app-server daemon, the Stop hook at a turn's end (" + t.Status() + ")"
	}
	var lanes []string
	_, serr := s.SocketLane()
	switch {
	case serr == nil && t.Listed:
		lanes = append(lanes, "socket (Claude Code lists it; its listener is checked at each post)")
	case serr == nil:
		lanes = append(lanes, "socket (recorded by its hooks; its listener is checked at each post)")
	case errors.Is(serr, conversation.ErrSocketHeld):
		lanes = append(lanes, "no socket: "+serr.Error())
	default:
		lanes = append(lanes, "no socket: "+render.InertLine(serr.Error()))
	}
	if r, ok := s.Registration(); ok && r.Source != "registry" {
		lanes = append(lanes, "Stop hook and rewake waiter (its hooks ran)")
	} else {
		lanes = append(lanes, "no Stop hook or rewake: it started without relay-baton's hooks ('relay-baton hook install', then restart it, adds them)")
	}
	state := t.Status()
	if t.State != procfacts.Live {
		state = string(t.State)
	}
	return state + "; " + strings.Join(lanes, "; ")
}
