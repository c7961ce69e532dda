package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
)

// The socket lane. Claude Code (2.1.224 and later) binds an inbox socket
// per session for cross-session messaging and gives its path and a token
// to its hooks as CLAUDE_CODE_MESSAGING_SOCKET and
// CLAUDE_CODE_MESSAGING_TOKEN. relay-baton's hooks record both in the
// session's folder (socket.json, 0600); a sender then claims a message
// like every lane (claims.go, lane "socket") and posts its framed text to
// the socket as newline-delimited JSON: an auth line, then a user message
// in the stream-json input shape. The socket answers nothing: delivery is
// confirmed from the transcript, and a claim whose post never shows is
// put back in the inbox by recoverClaims like any other.
//
// An idle session starts a turn at once; a busy one takes the message in
// with the result of the tool call that is running (between tool calls),
// instead of at the end of the whole turn. Any failure to post (no
// socket, a refused or vanished one, a path that is not a socket, a
// timeout) puts the message back in the inbox, first in line, for the
// Stop hook and the asyncRewake waiter: the lane is chosen per message.

// The environment variables Claude Code gives its hooks.
const (
	socketEnv      = "CLAUDE_CODE_MESSAGING_SOCKET"
	socketTokenEnv = "CLAUDE_CODE_MESSAGING_TOKEN"
)

// NoSocketEnv switches the socket lane off: set to 1 in a session's
// environment its hooks record no socket (the Stop hook and the rewake
// waiter deliver, as before the socket existed); set for a sender, it
// never posts.
const NoSocketEnv = "RELAY_BATON_NO_SOCKET"

// socketName is the file, in a session's chat folder, that records its
// messaging socket.
const socketName = "socket.json"

// socketTimeout bounds one post: the dial, and the write of both lines.
const socketTimeout = claudecode.PostTimeout

// maxSocketBurst caps the messages the stress test's senders post at once.
const maxSocketBurst = 20

// errAwaitingAnswer: an earlier message to the session has not been
// answered yet (awaitingAnswer): the next one waits in the inbox, so that
// each message gets its own turn and its own reply.
var errAwaitingAnswer = errors.New("an earlier message has not been answered yet")

// awaitingAnswer reports the earlier message the next one waits behind: a
// message posted to the socket whose turn has not ended (its claim is not
// settled, it has no stored reply and the transcript shows no end of its
// turn); a socket post the transcript showed whose turn has not ended
// (answered.go); or, while the session is in a turn by its hooks' word,
// one that reached the model in that turn (answering/). One message per
// turn boundary: two messages posted during one busy turn would reach the
// model in one request, and the turn's answer would be the reply of both.
// The turn's end (the transcript's, or the Stop hook's stored reply) lets
// the next one go; a post that never shows holds the next message until
// it is settled (the claim grace at most). It changes nothing: recoverClaims
// settles what it finds. A cachedOnly look starts no process (a view's).
func (s *Session) awaitingAnswer(now time.Time, mode lookMode) (string, bool) {
	names, _ := safeio.ReadDirNames(s.ClaimsDir())
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".json")
		if !ok || strings.HasPrefix(n, ".") || validMessageID(id) != nil {
			continue
		}
		b, err := safeio.ReadOwned(markerPath(s, id), 64<<10)
		if err != nil {
			continue
		}
		var mk claimMarker
		if json.Unmarshal(b, &mk) != nil || mk.Lane != LaneSocket {
			continue
		}
		if _, err := os.Lstat(s.outboxPath(id)); err == nil {
			continue // answered: its reply is stored
		}
		if st, err := s.State(id); err != nil || st.Delivered == nil || st.Delivered.DeliveredAt == nil {
			continue // not posted (yet, or it went back): the claim is not an answer awaited
		}
		if path := transcriptOf(s, mk); path != "" {
			if _, ended, _, _ := turnOf(path, mk.Offset, id); ended {
				continue // shown and answered: recoverClaims settles it
			}
		}
		return id, true
	}
	names, _ = safeio.ReadDirNames(s.path(answeringName))
	busy := unknown // the hooks' busy mark, read once when needed
	for _, id := range names {
		if validMessageID(id) != nil {
			continue
		}
		if m, ok := readAnswerMark(s, id); ok {
			if ended, _ := answerState(s, id, m, now, mode); !ended {
				return id, true
			}
			continue
		}
		if busy == unknown {
			busy = no
			if s.Busy(now) {
				busy = yes
			}
		}
		if busy == yes {
			return id, true
		}
	}
	return "", false
}

// SocketInfo is socket.json: where the session's messaging socket is and
// the token that authenticates a post. The token is a secret of the
// session: it is never printed, logged or put in an error.
type SocketInfo struct {
	Path  string `json:"path"`
	Token string `json:"token,omitempty"`
	// Process is the session process that bound the socket (the socket
	// dies with it).
	Process procfacts.Process `json:"process,omitzero"`
	// PermissionMode is the session's, as its last UserPromptSubmit said:
	// a session in bypassPermissions holds peer messages for the user's
	// approval, so the socket lane is not used for it.
	PermissionMode string    `json:"permissionMode,omitempty"`
	RecordedAt     time.Time `json:"recordedAt"`
}

// Errors of the socket lane (wrapped).
var (
	errNoSocket   = errors.New("no messaging socket recorded for the session (Claude Code before 2.1.224, messaging switched off, or the session started before `relay-baton hook install`)")
	ErrSocketHeld = errors.New("the session runs in bypassPermissions, where Claude Code holds a posted message for the user's approval")
	// errSocketDrops: a post to this session process's socket was taken
	// but never shown in its transcript (socket-off.json): the socket lane
	// is off for it, the Stop hook and the rewake waiter deliver.
	errSocketDrops = errors.New("the messaging socket dropped a message")
)

// socketOffName is the file, beside socket.json, that turns the socket
// lane off for one session process after a post it took never showed.
const socketOffName = "socket-off.json"

// SocketOff is socket-off.json: the session process whose socket took a
// message and never showed it, which message, when and why.
type SocketOff struct {
	Process   procfacts.Process `json:"process,omitzero"`
	Path      string            `json:"path"`
	MessageID string            `json:"messageId"`
	Reason    string            `json:"reason"`
	Since     time.Time         `json:"since"`
}

// Words is the short form of the state for the targets' rows and the page.
func (o SocketOff) Words() string { return "socket drops messages: delivered by hooks" }

// socketOffState reads socket-off.json; ok is false when there is none,
// or when it is about another process or socket than the one recorded
// now (the session restarted: the lane is tried again).
func (s *Session) socketOffState() (SocketOff, bool) {
	b, err := safeio.ReadOwned(s.path(socketOffName), 64<<10)
	if err != nil {
		return SocketOff{}, false
	}
	var o SocketOff
	if json.Unmarshal(b, &o) != nil {
		return SocketOff{}, false
	}
	info, ok := s.Socket()
	if !ok || info.Process != o.Process || info.Path != o.Path {
		return SocketOff{}, false
	}
	return o, true
}

// markSocketOff turns the socket lane off for the recorded socket's
// process: message id, posted there, never showed (why).
func markSocketOff(s *Session, id, why string) {
	info, ok := s.Socket()
	if !ok {
		return
	}
	if o, ok := s.socketOffState(); ok && o.MessageID != "" {
		return // already off: the first message that showed it stays named
	}
	o := SocketOff{Process: info.Process, Path: info.Path, MessageID: id, Reason: why, Since: time.Now().UTC().Truncate(time.Millisecond)}
	b, _ := json.Marshal(o)
	if err := writeFileAtomic(s.dir, socketOffName, append(b, '\n'), false); err != nil {
		s.RecordError(fmt.Errorf("record that the messaging socket dropped %s: %w", id, err))
	}
}

// socketConfirmed turns the socket lane back on after a post claimed at
// claimedAt showed in the transcript, when that post was made after the
// lane was turned off (a later post confirmed).
func socketConfirmed(s *Session, claimedAt time.Time) {
	if o, ok := s.socketOffState(); ok && claimedAt.After(o.Since) {
		os.Remove(s.path(socketOffName))
	}
}

// RecordSocket writes socket.json (0600, never through a symlink) unless
// it already says the same; an empty or relative path is refused.
func (s *Session) RecordSocket(info SocketInfo) error {
	if info.Path == "" || !filepath.IsAbs(info.Path) {
		return fmt.Errorf("messaging socket path %q is not absolute", render.Cut(info.Path, 200))
	}
	old, ok := s.Socket()
	if ok && info.PermissionMode == "" && old.Process == info.Process {
		info.PermissionMode = old.PermissionMode // said by an earlier prompt of the same process
	}
	if ok && old.Path == info.Path && old.Token == info.Token && old.Process == info.Process && old.PermissionMode == info.PermissionMode {
		return nil
	}
	if err := checkDir(s.dir); err != nil {
		return err
	}
	info.RecordedAt = time.Now().UTC().Truncate(time.Millisecond)
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.dir, socketName, append(b, '\n'), false)
}

// clearSocket removes socket.json (the session's new process has no
// socket).
func (s *Session) clearSocket() {
	if err := os.Remove(s.path(socketName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.RecordError(fmt.Errorf("remove %s: %w", socketName, err))
	}
}

// Socket reads socket.json; ok is false when there is none (or it is not
// a regular file of ours).
func (s *Session) Socket() (SocketInfo, bool) {
	b, err := safeio.ReadOwned(s.path(socketName), 64<<10)
	if err != nil {
		return SocketInfo{}, false
	}
	var info SocketInfo
	if json.Unmarshal(b, &info) != nil || info.Path == "" {
		return SocketInfo{}, false
	}
	return info, true
}

// SocketLane reports whether a message to s would go by the socket now:
// the socket is recorded, the process that bound it still runs, the
// session does not hold peer messages (bypassPermissions), and a socket
// (not a FIFO, a regular file or a link) is at its path. The error says
// why not.
func (s *Session) SocketLane() (SocketInfo, error) {
	return socketLane(s, context.Background(), procfacts.System, mayRun)
}

// viewSocketLane is SocketLane for a view (Reachability): Claude Code's
// registry is read only as its last answer left it.
func viewSocketLane(s *Session) (SocketInfo, error) {
	return socketLane(s, context.Background(), procfacts.System, cachedOnly)
}

// socketLane is SocketLane; ctx bounds the read of Claude Code's registry
// for a session no hook recorded a socket for, and a cachedOnly look (a
// view's) reads only the registry's last answer: it starts no claude.
func socketLane(s *Session, ctx context.Context, procs procfacts.Source, mode lookMode) (SocketInfo, error) {
	if os.Getenv(NoSocketEnv) == "1" {
		return SocketInfo{}, fmt.Errorf("%w: switched off by %s=1", errNoSocket, NoSocketEnv)
	}
	if runtime.GOOS == "windows" {
		// Claude Code's socket is a named pipe there: not posted to yet.
		return SocketInfo{}, fmt.Errorf("%w: on Windows the session's inbox is a named pipe, which relay-baton does not post to", errNoSocket)
	}
	info, ok := s.Socket()
	if !ok {
		if p, off := socketSwitchedOff(s); off && p.Check(procs) == procfacts.Live {
			return SocketInfo{}, fmt.Errorf("%w: switched off by %s=1 in the session's environment (its hooks said so at pid %d); the Stop hook and the rewake waiter deliver to it", errNoSocket, NoSocketEnv, p.PID)
		}
		// No hook recorded one: the socket of the process Claude Code's
		// registry names for the session, if it lists it.
		return registrySocket(s, ctx, mode)
	}
	switch info.Process.Check(procs) {
	case procfacts.Live:
	case procfacts.Ended:
		return info, fmt.Errorf("%w: the session process that bound it (pid %d) has ended", errNoSocket, info.Process.PID)
	default:
		// No full process evidence (pid, start time, boot id): not a
		// record relay-baton's hook wrote on this machine.
		return info, fmt.Errorf("%w: no process of this machine is recorded for it", errNoSocket)
	}
	if info.PermissionMode == "bypassPermissions" {
		return info, ErrSocketHeld
	}
	if o, ok := s.socketOffState(); ok {
		return info, fmt.Errorf("%w: message %s posted at %s %s; the Stop hook and the rewake waiter deliver to this session process (a restarted or resumed session tries the socket again)", errSocketDrops, o.MessageID, o.Since.Local().Format("15:04:05"), o.Reason)
	}
	if err := peer.CheckSocket(info.Path); err != nil {
		return info, err
	}
	return info, nil
}

// deliverSocket posts the inbox's oldest message to the session's socket,
// claimed for the socket lane before it is posted (a poster that dies
// between the two leaves it to recoverClaims: back in the inbox, delivered
// once), unless an earlier message awaits its answer (errAwaitingAnswer:
// one message per turn boundary). A failure to post puts the message back
// in the inbox first in line for the hook lanes. It returns how many it
// posted (0 or 1) and the failure (nil when the inbox is empty; when no
// socket is usable err is the reason, wrapping errNoSocket, ErrSocketHeld
// or errSocketDrops). ctx bounds the registry read and the post.
func (s *Session) deliverSocket(ctx context.Context, transcript string) (int, error) {
	info, err := socketLane(s, ctx, procfacts.System, mayRun)
	if err != nil {
		return 0, err
	}
	recoverClaims(s) // a settled claim no longer holds the next message back
	if id, ok := s.awaitingAnswer(time.Now(), mayRun); ok {
		return 0, fmt.Errorf("%w (message %s): the next one waits in the inbox until it is", errAwaitingAnswer, id)
	}
	res, err := s.ClaimWith(LaneSocket, ClaimOptions{Handover: true, Transcript: transcript})
	if err != nil || !res.OK {
		return 0, err
	}
	if err := claudecode.Post(ctx, info.Path, info.Token, info.Process.PID, s.Frame(res.Message), socketTimeout); err != nil {
		_ = res.abandon(err)
		return 0, err
	}
	_ = res.Delivered()
	return 1, nil
}

// recordSocketFromEnv records the socket the hook's environment names
// (getenv: os.Getenv) for the session process p; with clear, a hook run
// without one (a new process with messaging off) removes an old record.
func recordSocketFromEnv(s *Session, getenv func(string) string, p procfacts.Process, permissionMode string, clear bool) {
	path := getenv(socketEnv)
	if getenv(NoSocketEnv) == "1" {
		path = "" // the socket lane is switched off for this session
		recordSwitchedOff(s, p)
	} else if path != "" {
		os.Remove(s.path(noSocketName))
	}
	if path == "" {
		if clear {
			if _, ok := s.Socket(); ok {
				s.clearSocket()
			}
		}
		return
	}
	err := s.RecordSocket(SocketInfo{Path: path, Token: getenv(socketTokenEnv), Process: p, PermissionMode: permissionMode})
	if err != nil {
		s.RecordError(fmt.Errorf("record the messaging socket: %w", err))
	}
}

// noSocketName records that the session process named in it runs with
// RELAY_BATON_NO_SOCKET=1 (its hooks saw it): no sender posts to its
// socket, not even one found through Claude Code's registry.
const noSocketName = "no-socket.json"

// recordSwitchedOff writes no-socket.json for process p (unless it says so
// already).
func recordSwitchedOff(s *Session, p procfacts.Process) {
	if old, ok := socketSwitchedOff(s); ok && old == p {
		return
	}
	b, _ := json.Marshal(p)
	if err := writeFileAtomic(s.dir, noSocketName, append(b, '\n'), false); err != nil {
		s.RecordError(fmt.Errorf("record that the messaging socket is switched off: %w", err))
	}
}

// socketSwitchedOff reads no-socket.json: the process that runs with the
// socket lane switched off.
func socketSwitchedOff(s *Session) (procfacts.Process, bool) {
	return readProcess(s.path(noSocketName))
}
