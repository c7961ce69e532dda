package conversation

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The sessions Claude Code's registry lists (package claudecode), made
// targets of the lanes: the socket lane of a session no hook recorded a
// socket for, the chat folder made for it, and the registry's sessions of
// a workspace.

// registrySocket is the socket lane of a session no hook recorded a socket
// for: the registry's pid, its socket, the path checked (the listening
// end is checked at the post: it must be that pid).
func registrySocket(s *Session, ctx context.Context, mode lookMode) (SocketInfo, error) {
	var l claudecode.Session
	var ok bool
	var err error
	if mode == cachedOnly {
		l, ok = claudecode.CachedSession(s.ID)
	} else {
		l, ok, err = claudecode.FindSession(ctx, s.ID)
	}
	if err != nil {
		return SocketInfo{}, fmt.Errorf("%w (%w)", errNoSocket, err)
	}
	if !ok {
		return SocketInfo{}, errNoSocket
	}
	info := SocketInfo{Path: claudecode.SocketPath(l.PID), Process: procfacts.Identify(procfacts.System, l.PID)}
	if !info.Process.Known() {
		info.Process.PID = l.PID
	}
	if err := peer.CheckSocket(info.Path); err != nil {
		return info, err
	}
	return info, nil
}

// adopt makes the chat folder of a session the registry lists (its inbox,
// session.json with its cwd, process.json with its pid): relay-baton's own
// queue for it. Nothing is written in Claude Code's folders.
func adopt(s *Session, l claudecode.Session) error {
	if err := s.Ensure(); err != nil {
		return err
	}
	if _, ok := s.Registration(); !ok {
		if err := s.Register(Registration{Cwd: l.Cwd, Source: "registry"}); err != nil {
			return err
		}
	}
	if p := procfacts.Identify(procfacts.System, l.PID); p.Known() {
		return s.RecordProcess(p)
	}
	return nil
}

// listedIn is the registry's sessions whose cwd is ws or under it, by id;
// none when the registry cannot be read (claudecode.RegistryNote says why).
func listedIn(ctx context.Context, ws string) map[string]claudecode.Session {
	list, err := claudecode.Registry(ctx)
	if err != nil || len(list) == 0 {
		return nil
	}
	roots := []string{ws}
	if r, err := filepath.EvalSymlinks(ws); err == nil && r != ws {
		roots = append(roots, r)
	}
	out := map[string]claudecode.Session{}
	for _, l := range list {
		for _, r := range roots {
			if l.Cwd != "" && inWorkspace(r, l.Cwd) {
				out[l.SessionID] = l
				break
			}
		}
	}
	return out
}

// waitTranscript waits up to d for the transcript of s to exist (a session
// writes it at its first turn: a message to a fresh session comes first).
func waitTranscript(ctx context.Context, s *Session, d, poll time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		if p := LocateTranscript(s); p != "" {
			return p
		}
		if time.Now().After(deadline) {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(min(poll, 200*time.Millisecond)):
		}
	}
}

// Listed reports whether Claude Code's registry lists s as a running
// session of its workspace: a message can be sent to it without hooks
// (Send makes its inbox).
func (s *Session) Listed() bool {
	_, ok := listedIn(context.Background(), s.Workspace)[s.ID]
	return ok
}
