package claudecode

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
	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/subprocess"
)

// Claude Code's own registry of live sessions. `claude agents --json`
// ("Print active sessions (interactive and background) as a JSON array and
// exit") lists, per session of the user on this machine, its pid, cwd,
// kind, startedAt, sessionId, name and status (idle, busy, or waiting with
// waitingFor). A session it lists is real: relay-baton reaches it through
// its messaging socket, <temp dir>/cc-socks/<pid>.sock (SocketPath), after
// asking the socket who listens there (package peer), with no relay-baton
// hook installed. Package conversation merges the hook-registered sessions
// (session.json in the chat folder) with it, one row per session id.

// Session is one entry of `claude agents --json`.
type Session struct {
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

// RegistryTTL is how long one answer of `claude agents --json` is used
// (the call costs about 0.15 s, seconds on a loaded machine).
const RegistryTTL = 3 * time.Second

// registryTimeout bounds one `claude agents --json`.
const registryTimeout = 20 * time.Second

// registryOff is set in the hooks' processes: a hook never runs claude
// (its own session is in socket.json).
var registryOff atomic.Bool

var registryCache struct {
	sync.Mutex
	at   time.Time
	bin  string
	list []Session
	err  error
}

// Registry returns the live Claude Code sessions of this user as `claude
// agents --json` lists them, answered from a cache younger than
// RegistryTTL. The error wraps errNoRegistry and says why in one line.
func Registry(ctx context.Context) ([]Session, error) {
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
	if registryCache.bin == bin && time.Since(registryCache.at) < RegistryTTL {
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

func readRegistry(ctx context.Context, bin string) ([]Session, error) {
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
func parseRegistry(b []byte) ([]Session, error) {
	var raw []Session
	if err := json.Unmarshal(bytes.TrimSpace(b), &raw); err != nil {
		return nil, err
	}
	out := raw[:0]
	for _, s := range raw {
		if sessionid.IsUUID(s.SessionID) && s.PID > 0 {
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

// FindSession is the registry's entry for session id (ok false when it
// lists none, or cannot be read: err then says why).
//
// A session the last answer named (registry_cache.go), whose process still
// runs as it did then, is answered without a new call of claude: its
// Status is then that answer's (Registry has the current ones).
func FindSession(ctx context.Context, id string) (Session, bool, error) {
	if os.Getenv(NoRegistryEnv) != "1" && !registryOff.Load() {
		if l, ok := rememberedSession(id); ok {
			return l, true, nil
		}
	}
	list, err := Registry(ctx)
	if err != nil {
		return Session{}, false, err
	}
	for _, l := range list {
		if strings.EqualFold(l.SessionID, id) {
			return l, true, nil
		}
	}
	return Session{}, false, nil
}

// SocketPath is the messaging socket Claude Code binds for its
// process pid: <temp dir>/cc-socks/<pid>.sock (os.TempDir: $TMPDIR, which
// is the per-user folder under /var/folders on macOS, else /tmp).
func SocketPath(pid int) string {
	return filepath.Join(os.TempDir(), "cc-socks", strconv.Itoa(pid)+".sock")
}

// SkipRegistry is called by a hook's process: a hook never runs claude (its
// session recorded its own socket), so Registry answers errNoRegistry.
func SkipRegistry() { registryOff.Store(true) }

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

// Awaits is what a waiting session waits for, in the words of
// conversation's Target.NeedsUser.
func (l Session) Awaits() string {
	if l.WaitingFor != "" {
		return l.WaitingFor
	}
	return "its user"
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
			state = "waiting for its user (" + l.Awaits() + ")"
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
