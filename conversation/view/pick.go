package view

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/events/render"
)

// PickSession is the session a command talks to: id when given, a whole
// id or a unique prefix of one (an error wrapping
// conversation.ErrBadSessionID, ErrUnknownSession or ErrAmbiguousSession
// otherwise), else the workspace's lead (conversation.LeadContext). ctx
// ends the read of Claude Code's registry either needs (the error is then
// ctx's).
func PickSession(ctx context.Context, ws, id string) (string, error) {
	if id != "" {
		return resolveSessionID(ctx, ws, id)
	}
	t, err := conversation.LeadContext(ctx, ws)
	return t.SessionID, err
}

// minSessionPrefix is the fewest hex digits a short session id may have:
// the eight every view shows (orch 385a20e1, "session 385a20e1").
const minSessionPrefix = 8

// Errors of PickSession for a prefix.
var (
	ErrUnknownSession   = errors.New("matches no session")
	ErrAmbiguousSession = errors.New("matches more than one session")
)

// resolveSessionID returns the session id id stands for in ws: id itself
// when it is a whole id (UUID-shaped), else the one session of ws (any
// conversation.ListAllTargets lists, ended ones included) whose id starts with id, a
// prefix of minSessionPrefix or more hex digits (with the id's dashes, in
// any letter case). None, or several, is an error that says what to do.
// ctx ends its read of Claude Code's registry, and then the error is
// ctx's.
func resolveSessionID(ctx context.Context, ws, id string) (string, error) {
	if sessionid.IsUUID(id) {
		return id, nil
	}
	if !sessionPrefix(id) {
		return "", fmt.Errorf("%q: %w, or a unique prefix of one (%d or more hex digits, as the views show it)", render.Cut(id, 80), conversation.ErrBadSessionID, minSessionPrefix)
	}
	ts, err := conversation.ListTargetsContext(ctx, ws, true)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return "", err
	}
	want := strings.ToLower(id)
	var found []string
	for _, t := range ts {
		if strings.HasPrefix(strings.ToLower(t.SessionID), want) {
			found = append(found, t.SessionID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("session id %q %w of %s: `relay-baton targets --all` lists them", id, ErrUnknownSession, ws)
	}
	return "", fmt.Errorf("session id %q %w of %s (%s): give more of the id", id, ErrAmbiguousSession, ws, strings.Join(found, ", "))
}

// sessionPrefix reports whether id can be the start of a session id: hex
// digits and dashes where a UUID has them, minSessionPrefix digits or more.
func sessionPrefix(id string) bool { return len(id) >= minSessionPrefix && sessionid.Shaped(id) }
