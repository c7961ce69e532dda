package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/peer"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/subprocess"
)

// Claude Code's own registry of live sessions. `claude agents --json`
// ("Print active sessions (interactive and background) as a JSON array and
// exit") lists, per session of the user on this machine, its pid, cwd,
// kind, startedAt, sessionId, name and status (idle, busy, or waiting with
// waitingFor). A session it lists is real: relay-baton reaches it through
// its messaging socket, <temp dir>/cc-socks/<pid>.sock, after asking the
// socket who listens there (package peer), with no relay-baton hook installed.
// Hook-registered sessions (session.json in the chat folder) are merged
// with it, one row per session id.

// LiveSession is one entry of `claude agents --json`.
type LiveSession struct {
	PID        int    `json:"pid"`
	Cwd        string `json:"cwd"`
	Kind       string `json:"kind"`      // interactive, or a background kind
	StartedAt  int64  `json:"startedAt"` // ms since the epoch
	SessionID  string `json:"sessionId"`
	Name       string `json:"name"`
	Status     string `json:"status"`               // idle, busy, waiting
	WaitingFor string `json:"waitingFor,omitempty"` // with waiting: "permission prompt", ...
}

// The registry's status words relay-baton understands.
const (
	StatusIdle    = "idle"
	StatusBusy    = "busy"
	StatusWaiting = "waiting"
)

// NoRegistryEnv set to 1 leaves Claude Code's registry unread: the
// targets are the sessions relay-baton's hooks registered, as before.
const NoRegistryEnv = "RELAY_BATON_NO_REGISTRY"

// errNoRegistry: `claude agents --json` could not be used (no claude, an
// older one, an answer that is not the JSON array it documents). Its
// message is the one line targets print.
var errNoRegistry = errors.New("Claude Code's session registry is not read")

// registryTTL is how long one answer of `claude agents --json` is used
// (the call costs about 0.15 s, seconds on a loaded machine).
const registryTTL = 3 * time.Second

// registryTimeout bounds one `claude agents --json`.
const registryTimeout = 20 * time.Second

// registryOff is set in the hooks' processes: a hook never runs claude
// (its own session is in socket.json).
var registryOff atomic.Bool

var registryCache struct {
	sync.Mutex
	at   time.Time
	bin  string
	list []LiveSession
	err  error
}

// Registry returns the live Claude Code sessions of this user as `claude
// agents --json` lists them, answered from a cache younger than
// registryTTL. The error wraps errNoRegistry and says why in one line.
func Registry(ctx context.Context) ([]LiveSession, error) {
	if os.Getenv(NoRegistryEnv) == "1" {
		return nil, fmt.Errorf("%w: switched off by %s=1", errNoRegistry, NoRegistryEnv)
	}
	if registryOff.Load() {
		return nil, fmt.Errorf("%w: not read by a hook", errNoRegistry)
	}
	bin, err := agents.Binary(agents.Claude)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoRegistry, err)
	}
	registryCache.Lock()
	defer registryCache.Unlock()
	if registryCache.bin == bin && time.Since(registryCache.at) < registryTTL {
		return registryCache.list, registryCache.err
	}
	list, err := readRegistry(ctx, bin)
	if err != nil && ctx.Err() != nil {
		// The caller gave up: its cancellation is no answer for the others.
		return list, err
	}
	registryCache.at, registryCache.bin, registryCache.list, registryCache.err = time.Now(), bin, list, err
	if err == nil {
		rememberRegistry(list)
	}
	return list, err
}

// ForgetRegistry drops the cached answer (a test, or a caller that knows a
// session just started or ended).
func ForgetRegistry() {
	registryCache.Lock()
	registryCache.at = time.Time{}
	registryCache.Unlock()
}

func readRegistry(ctx context.Context, bin string) ([]LiveSession, error) {
	ctx, cancel := context.WithTimeout(ctx, registryTimeout)
	defer cancel()
	var stderr bytes.Buffer
	c := subprocess.Command(bin, "agents", "--json")
	c.Stderr = &stderr
	c.Env = append(os.Environ(), "DISABLE_AUTOUPDATER=1")
	out, err := subprocess.Output(ctx, c)
	if cerr := ctx.Err(); err != nil && cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("stopped: %w (%w)", cerr, err) // the caller's end, or registryTimeout
	}
	if err != nil {
		line := firstLine(stderr.String())
		if line == "" {
			line = firstLine(string(out))
		}
		if strings.Contains(line, "unknown option") || strings.Contains(line, "unknown command") {
			return nil, fmt.Errorf("%w: %s has no `agents --json` (%s): update Claude Code (`npm install -g @anthropic-ai/claude-code`); until then only sessions started after `relay-baton hook install` are targets", errNoRegistry, bin, line)
		}
		return nil, fmt.Errorf("%w: `%s agents --json` failed (%w: %s); only sessions started after `relay-baton hook install` are targets", errNoRegistry, bin, err, line)
	}
	list, err := parseRegistry(out)
	if err != nil {
		return nil, fmt.Errorf("%w: `%s agents --json` printed no session list (%w): update Claude Code, or use `relay-baton hook install`", errNoRegistry, bin, err)
	}
	return list, nil
}

// parseRegistry reads `claude agents --json`: a JSON array of sessions.
// Entries without a session id in the UUID shape or a pid are left out.
func parseRegistry(b []byte) ([]LiveSession, error) {
	var raw []LiveSession
	if err := json.Unmarshal(bytes.TrimSpace(b), &raw); err != nil {
		return nil, err
	}
	out := raw[:0]
	for _, s := range raw {
		if isUUID(s.SessionID) && s.PID > 0 {
			s.SessionID = strings.ToLower(s.SessionID)
			out = append(out, s)
		}
	}
	return out, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 200 {
		l = l[:200]
	}
	return l
}

// registrySession is the registry's entry for session id (ok false when it
// lists none, or cannot be read: err then says why).
//
// A session the last answer named (registry_cache.go), whose process still
// runs as it did then, is answered without a new call of claude: its
// Status is then that answer's (Registry has the current ones).
func registrySession(ctx context.Context, id string) (LiveSession, bool, error) {
	if os.Getenv(NoRegistryEnv) != "1" && !registryOff.Load() {
		if l, ok := rememberedSession(id); ok {
			return l, true, nil
		}
	}
	list, err := Registry(ctx)
	if err != nil {
		return LiveSession{}, false, err
	}
	for _, l := range list {
		if strings.EqualFold(l.SessionID, id) {
			return l, true, nil
		}
	}
	return LiveSession{}, false, nil
}

// claudeSocketPath is the messaging socket Claude Code binds for its
// process pid: <temp dir>/cc-socks/<pid>.sock (os.TempDir: $TMPDIR, which
// is the per-user folder under /var/folders on macOS, else /tmp).
func claudeSocketPath(pid int) string {
	return filepath.Join(os.TempDir(), "cc-socks", strconv.Itoa(pid)+".sock")
}

// registrySocket is the socket lane of a session no hook recorded a socket
// for: the registry's pid, its socket, the path checked (the listening
// end is checked at the post: it must be that pid).
func registrySocket(s *Session, ctx context.Context, mode lookMode) (SocketInfo, error) {
	var l LiveSession
	var ok bool
	var err error
	if mode == cachedOnly {
		l, ok = cachedRegistrySession(s.ID)
	} else {
		l, ok, err = registrySession(ctx, s.ID)
	}
	if err != nil {
		return SocketInfo{}, fmt.Errorf("%w (%w)", errNoSocket, err)
	}
	if !ok {
		return SocketInfo{}, errNoSocket
	}
	info := SocketInfo{Path: claudeSocketPath(l.PID), Process: procfacts.Identify(procfacts.System, l.PID)}
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
func adopt(s *Session, l LiveSession) error {
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
// none when the registry cannot be read (RegistryNote says why).
func listedIn(ctx context.Context, ws string) map[string]LiveSession {
	list, err := Registry(ctx)
	if err != nil || len(list) == 0 {
		return nil
	}
	roots := []string{ws}
	if r, err := filepath.EvalSymlinks(ws); err == nil && r != ws {
		roots = append(roots, r)
	}
	out := map[string]LiveSession{}
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

// RegistryNote is the one line the targets' views print when Claude Code's
// registry could not be read ("" when it was, or was switched off): why,
// and that only hook-registered sessions are listed.
func RegistryNote() string {
	_, err := Registry(context.Background())
	if err == nil || os.Getenv(NoRegistryEnv) == "1" {
		return ""
	}
	return "note: " + err.Error()
}

// registryWaiting is what a waiting session waits for, in the words of
// Target.NeedsUser.
func registryWaiting(l LiveSession) string {
	if l.WaitingFor != "" {
		return l.WaitingFor
	}
	return "its user"
}

// registryTranscript is where Claude Code writes the transcript of session
// id started in cwd: projects/<slug of cwd>/<id>.jsonl under its config
// folder, else any projects/*/<id>.jsonl; "" when none exists yet.
func registryTranscript(id, cwd string) string {
	if d := ProjectDir(cwd); d != "" && cwd != "" {
		p := filepath.Join(d, id+".jsonl")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if root := projectsRoot(); root != "" {
		if m, _ := filepath.Glob(filepath.Join(root, "*", id+".jsonl")); len(m) > 0 {
			return m[0]
		}
	}
	return ""
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

// WriteEverywhere is `targets --everywhere`: every session Claude Code's
// list names, whatever its folder (the cwd, state and pid), with the
// command that reaches one (send works per repository: --workspace).
// The cwds come from Claude Code: they are sanitized. ctx ends the read
// of the registry.
func WriteEverywhere(ctx context.Context, w io.Writer, now time.Time) error {
	list, err := Registry(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "Claude Code lists no running session.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATE\tPID\tSTARTED\tCWD")
	for _, l := range list {
		state := l.Status
		if l.Status == StatusWaiting {
			state = "waiting for its user (" + registryWaiting(l) + ")"
		}
		started := "-"
		if l.StartedAt > 0 {
			started = now.Sub(time.UnixMilli(l.StartedAt)).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", l.SessionID, render.InertLine(state), l.PID, started, render.InertLine(l.Cwd))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, "send to one with: relay-baton send --workspace CWD --session ID \"message\"")
	return err
}
