package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// Registration is what the SessionStart hook records about a session, so
// nothing has to guess where its transcript is.
type Registration struct {
	SessionID      string    `json:"sessionId"`
	TranscriptPath string    `json:"transcriptPath,omitempty"`
	Cwd            string    `json:"cwd,omitempty"`
	Source         string    `json:"source,omitempty"` // startup, resume, clear, compact
	RegisteredAt   time.Time `json:"registeredAt"`
}

// Register creates the session's folders and writes session.json.
func (s *Session) Register(r Registration) error {
	if err := s.Ensure(); err != nil {
		return err
	}
	r.SessionID = s.ID
	if r.RegisteredAt.IsZero() {
		r.RegisteredAt = time.Now().UTC()
	}
	if r.TranscriptPath != "" && !filepath.IsAbs(r.TranscriptPath) {
		return fmt.Errorf("transcript path %q is not absolute", r.TranscriptPath)
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	return writeFileAtomic(s.dir, "session.json", append(b, '\n'), false) // the next SessionStart rewrites it
}

// HooklessOnly: the session was adopted from Claude Code's registry (no
// hook of relay-baton's registered it) and no relay-baton hooks are
// installed for the repository: its socket is the only lane that reaches it.
func (s *Session) HooklessOnly() bool {
	r, ok := s.Registration()
	return ok && r.Source == "registry" && ClaudeHooksIn(s.Workspace) == ""
}

// Registration reads session.json; ok is false when there is none.
func (s *Session) Registration() (Registration, bool) {
	b, err := safeio.ReadOwned(s.path(registrationName), 1<<20)
	if err != nil {
		return Registration{}, false
	}
	var r Registration
	if json.Unmarshal(b, &r) != nil {
		return Registration{}, false
	}
	return r, true
}

// MarkBusy records that the session is in a turn (the UserPromptSubmit
// hook). The idle lanes do not claim while it is set.
func (s *Session) MarkBusy() error {
	if err := checkChatDirs(s); err != nil {
		return err
	}
	now := time.Now()
	f, err := safeio.OpenChecked(s.path(busyName), os.O_CREATE|os.O_WRONLY, 0o600, true)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chtimes(s.path(busyName), now, now)
}

// ClearBusy removes the busy mark (the Stop hook, when it does not block).
func (s *Session) ClearBusy() error {
	err := os.Remove(s.path(busyName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// clearBusyOlderThan removes the busy mark only when it is older than d.
func (s *Session) clearBusyOlderThan(d time.Duration) error {
	fi, err := os.Lstat(s.path(busyName))
	if err != nil || time.Since(fi.ModTime()) < d {
		return nil
	}
	return s.ClearBusy()
}

// Busy reports whether the session is in a turn: a busy mark younger than
// busyTTL.
func (s *Session) Busy(now time.Time) bool {
	fi, err := os.Lstat(s.path(busyName))
	return err == nil && now.Sub(fi.ModTime()) < busyTTL
}

// WaiterLock is the one-waiter-per-session lock of the idle lanes.
type WaiterLock struct{ f *os.File }

// Release drops the lock.
func (l *WaiterLock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// lockWaiter takes the session's waiter lock (flock on wait.lock; the
// kernel drops it when the process dies). ok is false when another waiter
// holds it.
func (s *Session) lockWaiter() (*WaiterLock, bool, error) {
	if err := checkChatDirs(s); err != nil {
		return nil, false, err
	}
	f, err := safeio.OpenChecked(filepath.Join(s.dir, "wait.lock"), os.O_CREATE|os.O_RDWR, 0o600, true)
	if err != nil {
		return nil, false, err
	}
	ok, err := filelock.Try(f)
	if !ok || err != nil {
		f.Close()
		return nil, false, err
	}
	return &WaiterLock{f: f}, true, nil
}

// Waiting reports whether a waiter holds the lock now (the session is
// reachable while idle).
func (s *Session) Waiting() bool {
	l, ok, err := s.lockWaiter()
	if err != nil {
		return false
	}
	if ok {
		l.Release()
		return false
	}
	return true
}

// leadPath is the file that marks the lead session of a workspace.
func leadPath(ws string) string { return filepath.Join(ws, workspace.ChatDir, "lead") }

// MarkedLead is the session `targets --set-lead` marked as the lead of
// ws ("" when none is marked).
func MarkedLead(ws string) string {
	b, _ := safeio.ReadOwned(leadPath(ws), 4096)
	return strings.TrimSpace(string(b))
}

// SetLead marks id as the workspace's lead session ("" clears the mark).
func SetLead(ws, id string) error {
	if id == "" {
		err := os.Remove(leadPath(ws))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := ValidSessionID(id); err != nil {
		return err
	}
	root := filepath.Join(ws, workspace.ChatDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	return writeFileAtomic(root, "lead", []byte(id+"\n"), true)
}

// Target is a session of the workspace that could be chatted with.
type Target struct {
	SessionID      string             `json:"sessionId"`
	ChatCapable    bool               `json:"chatCapable"` // its inbox exists, or it is listed and its socket usable (registry.go)
	Lead           bool               `json:"lead"`
	State          procfacts.Liveness `json:"state"`         // live, ended or unknown (no process recorded)
	PID            int                `json:"pid,omitempty"` // the session's recorded process
	Busy           bool               `json:"busy"`          // in a turn (busy mark set)
	Waiting        bool               `json:"waiting"`       // an idle-lane waiter is armed
	Depth          int                `json:"queueDepth"`
	Oldest         time.Time          `json:"oldestQueued,omitzero"`
	LastActivity   time.Time          `json:"lastActivity,omitzero"`
	TranscriptPath string             `json:"transcriptPath,omitempty"`
	Cwd            string             `json:"cwd,omitempty"`
	// Agent is "claude" or "codex" (a Codex thread: SessionID is its
	// thread id, TranscriptPath its rollout file).
	Agent string `json:"agent"`
	// Loaded: a Codex thread held by a running codex process (codex.Loaded).
	Loaded bool `json:"loaded,omitempty"`
	// TUIQuit: a Codex thread whose TUI quit, held only by a codex
	// app-server daemon (State is Ended: nobody would see an answer).
	TUIQuit bool `json:"tuiQuit,omitempty"`
	// Socket: a message goes by the session's messaging socket (between
	// tool calls, or at once when idle; socket.go).
	Socket bool `json:"socket"`
	// SocketProblem: the session's socket took a message and never showed
	// it ("socket drops messages: delivered by hooks"): the socket lane is
	// off for its process and the hooks deliver.
	SocketProblem string `json:"socketProblem,omitempty"`
	// Delivers names the lane a message sent now would take: "socket",
	// "hook" (at the turn's end), "rewake" (idle, at once), "queue" (an
	// idle Codex thread) or "" (none until the session's next turn end).
	Delivers string `json:"delivers,omitempty"`
	// Listed: Claude Code's own registry (`claude agents --json`) lists
	// the session as running; Registry is its status word there (idle,
	// busy, waiting). A listed session needs no relay-baton hook.
	Listed   bool   `json:"listed,omitempty"`
	Registry string `json:"registryStatus,omitempty"`
	// NeedsUser: the session waits for its user (a permission prompt or a
	// question, attention.go): say what, so a queued message is no mystery.
	NeedsUser string `json:"needsUser,omitempty"`
}

// ListTargets returns the sessions of workspace that can answer: those
// whose recorded process (see RecordProcess) still runs, most recently
// active first. Sessions that ended, and sessions with no recorded process
// (a transcript only, or registered by an older relay-baton), are left
// out: ListAllTargets has them. The lead is the live session marked with
// SetLead, else the most recently active live chat-capable one; there is
// no lead when no session is live.
func ListTargets(ws string) ([]Target, error) {
	return listTargets(context.Background(), ws, false, procfacts.System)
}

// ListTargetsContext is ListTargets (ListAllTargets with all) whose read
// of Claude Code's registry ends with ctx (Ctrl-C, a page's request that
// is closed); the sessions it lists are then only those relay-baton knows
// without it.
func ListTargetsContext(ctx context.Context, ws string, all bool) ([]Target, error) {
	return listTargets(ctx, ws, all, procfacts.System)
}

// ListAllTargets is ListTargets with every session that has a chat folder
// in workspace or a transcript for it under the Claude Code projects
// folder, whatever its State (the lead is still only ever a live session).
func ListAllTargets(ws string) ([]Target, error) {
	return listTargets(context.Background(), ws, true, procfacts.System)
}

func listTargets(ctx context.Context, dir string, all bool, procs procfacts.Source) ([]Target, error) {
	ws, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	byID, listed, plant, err := gatherTargets(ctx, ws)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Target, 0, len(byID))
	for id, t := range byID {
		s, _ := OpenSession(ws, id)
		t.ChatCapable = s.ChatCapable()
		t.State = procfacts.Unknown
		if p, ok := s.Process(); ok {
			t.State, t.PID = p.Check(procs), p.PID
		}
		l, isListed := listed[id]
		if isListed {
			// Claude Code's registry lists it: live, whatever a file says.
			t.Listed, t.Registry, t.State, t.PID = true, l.Status, procfacts.Live, l.PID
		}
		if !all && t.State != procfacts.Live {
			continue
		}
		if r, ok := s.Registration(); ok {
			if r.TranscriptPath != "" {
				t.TranscriptPath = r.TranscriptPath
			}
			t.Cwd = r.Cwd
			t.LastActivity = r.RegisteredAt
		}
		if isListed {
			if t.Cwd == "" {
				t.Cwd = l.Cwd
			}
			if at := time.UnixMilli(l.StartedAt); l.StartedAt > 0 && at.After(t.LastActivity) {
				t.LastActivity = at
			}
		}
		if t.TranscriptPath == "" {
			t.TranscriptPath = LocateTranscript(s)
			if t.TranscriptPath == "" && isListed {
				t.TranscriptPath = claudecode.FindTranscript(id, l.Cwd)
			}
		}
		if t.State == procfacts.Unknown && !t.ChatCapable && printModeTranscript(t.TranscriptPath) {
			// A transcript only, of a print-mode run nothing registered: a
			// one-shot 'claude -p' (relay-baton's own agent runs among
			// them), which the hooks never serve. Not a target, ever.
			continue
		}
		if t.TranscriptPath != "" {
			if fi, err := os.Stat(t.TranscriptPath); err == nil && fi.ModTime().After(t.LastActivity) {
				t.LastActivity = fi.ModTime()
			}
		}
		if isListed && !t.ChatCapable {
			// Not hooked: reachable through its socket alone (the inbox is
			// made at the first send).
			if _, err := socketLane(s, ctx, procs, mayRun); err == nil {
				t.Socket, t.ChatCapable = true, true
			}
		}
		if t.ChatCapable {
			chatState(ctx, s, t, l, isListed, procs, now)
		}
		out = append(out, *t)
	}
	out = withCodexThreads(ws, out, now, all)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastActivity.Equal(out[j].LastActivity) {
			return out[i].LastActivity.After(out[j].LastActivity)
		}
		return out[i].SessionID < out[j].SessionID
	})
	markLeadIn(ws, out, plant.Lead)
	return out, nil
}

// gatherTargets gathers the sessions listTargets looks at: the chat folders
// of ws, the transcripts of its Claude Code project folder, the sessions
// Claude Code's registry lists there (listed), less those a clone planted
// (plant).
func gatherTargets(ctx context.Context, ws string) (map[string]*Target, map[string]claudecode.Session, workspace.Planted, error) {
	byID := map[string]*Target{}
	get := func(id string) *Target {
		t := byID[id]
		if t == nil {
			t = &Target{SessionID: id}
			byID[id] = t
		}
		return t
	}
	entries, err := os.ReadDir(filepath.Join(ws, workspace.ChatDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, workspace.Planted{}, err
	}
	for _, e := range entries {
		if ValidSessionID(e.Name()) == nil && e.IsDir() {
			get(e.Name())
		}
	}
	if dir := claudecode.ProjectDir(ws); dir != "" {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if ok && ValidSessionID(id) == nil && e.Type().IsRegular() {
				t := get(id)
				t.TranscriptPath = filepath.Join(dir, e.Name())
			}
		}
	}
	listed := listedIn(ctx, ws)
	for id := range listed {
		get(id)
	}
	plant := workspace.FindPlanted(ws)
	for id := range plant.Sessions {
		delete(byID, id) // committed by a clone: never a target
	}
	return byID, listed, plant, nil
}

// chatState fills in how a chat-capable target t is reached now: its
// queue, busy or waiting, its socket (or why not), whether it waits for
// its user, with the registry's word (l, when isListed) over the marks.
func chatState(ctx context.Context, s *Session, t *Target, l claudecode.Session, isListed bool, procs procfacts.Source, now time.Time) {
	q, _ := s.Queue()
	t.Depth, t.Oldest = q.Depth, q.Oldest
	t.Busy = s.Busy(now)
	t.Waiting = s.Waiting()
	if _, err := socketLane(s, ctx, procs, mayRun); err == nil {
		t.Socket = true
	} else if o, ok := s.socketOffState(); ok && errors.Is(err, errSocketDrops) {
		t.SocketProblem = o.Words()
		if s.HooklessOnly() {
			t.SocketProblem = "socket drops messages; no hooks installed to deliver: relay-baton hook install"
		}
	}
	if a, ok := s.NeedsUser(t.TranscriptPath); ok {
		t.NeedsUser = a.What()
	}
	switch {
	case !isListed:
	case l.Status == claudecode.StatusBusy:
		t.Busy = true
	case l.Status == claudecode.StatusWaiting:
		t.NeedsUser = l.Awaits()
	case l.Status == claudecode.StatusIdle:
		t.Busy, t.NeedsUser = false, ""
	}
	t.Delivers = t.lane()
}

// markLeadIn marks the lead among out (sorted): the session the lead mark
// names when it runs (not when a clone planted the mark: planted), else
// the first live chat-capable one.
func markLeadIn(ws string, out []Target, planted bool) {
	lead := -1
	if b, err := safeio.ReadOwned(leadPath(ws), 4096); err == nil && !planted {
		id := strings.TrimSpace(string(b))
		for i := range out {
			if out[i].SessionID == id && out[i].State == procfacts.Live {
				lead = i
			}
		}
	}
	if lead < 0 {
		for i := range out {
			if out[i].ChatCapable && out[i].State == procfacts.Live {
				lead = i
				break
			}
		}
	}
	if lead >= 0 {
		out[lead].Lead = true
	}
}

// ErrNoLiveSession: no session of the workspace is running with the hooks.
var ErrNoLiveSession = errors.New("no running Claude Code session")

// Lead returns the workspace's lead session: always a live one.
func Lead(ws string) (Target, error) {
	return LeadContext(context.Background(), ws)
}

// LeadContext is Lead; ctx ends its read of Claude Code's registry, and
// then the error is ctx's.
func LeadContext(ctx context.Context, ws string) (Target, error) {
	ts, err := ListTargetsContext(ctx, ws, false)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return Target{}, err
	}
	for _, t := range ts {
		if t.Lead {
			return t, nil
		}
	}
	why := "start Claude Code there (relay-baton finds it in Claude Code's own list of sessions, `claude agents`, and reaches it through its messaging socket)"
	if note := claudecode.RegistryNote(); note != "" {
		why = "start Claude Code there after `relay-baton hook install` (" + strings.TrimPrefix(note, "note: ") + ")"
	}
	return Target{}, fmt.Errorf("%w in %s: %s (one-shot `claude -p` runs are never targets; `relay-baton targets --all` lists ended sessions)", ErrNoLiveSession, ws, why)
}

// TranscriptOf finds the transcript (or Codex rollout) of session id in
// ws, with an error that says where it looked and what to run.
func TranscriptOf(ws, id string) (string, error) {
	s, err := OpenSession(ws, id)
	if err != nil {
		return "", err
	}
	if path := LocateTranscript(s); path != "" {
		return path, nil
	}
	return "", fmt.Errorf("no transcript found for session %s (looked in its registration and %s): `relay-baton targets` lists the sessions of this workspace", id, claudecode.ProjectsWhere())
}

// printModeTranscript reports whether the transcript at path was written by
// Claude Code in print mode ('claude -p': its lines carry
// "entrypoint":"sdk-cli"; the interactive TUI writes "cli"), judged from
// its first 64 KiB, read without blocking and without following a FIFO.
func printModeTranscript(path string) bool {
	if path == "" {
		return false
	}
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, buf)
	head := buf[:n]
	return bytes.Contains(head, []byte(`"entrypoint":"sdk-cli"`)) && !bytes.Contains(head, []byte(`"entrypoint":"cli"`))
}

// processName is the file, in a session's chat folder, holding the
// session's process (written by its hooks, see RecordProcess).
const processName = "process.json"

// RecordProcess writes p as the session's process (process.json) unless it
// is already recorded: the SessionStart and UserPromptSubmit hooks call it,
// so a resumed session (a new process, the same id) is followed. A zero p
// is not recorded.
func (s *Session) RecordProcess(p procfacts.Process) error {
	if !p.Known() {
		return nil
	}
	b, _ := json.Marshal(p)
	b = append(b, '\n')
	if old, err := safeio.ReadOwned(filepath.Join(s.dir, processName), 4096); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := checkChatDirs(s); err != nil {
		return err
	}
	return writeFileAtomic(s.dir, processName, b, false) // rewritten at each start
}

// Process returns the session's recorded process (ok=false when none).
func (s *Session) Process() (procfacts.Process, bool) {
	return readProcess(filepath.Join(s.dir, processName))
}

// readProcess reads a process record of the session folder (process.json,
// no-socket.json); ok=false when there is none or it names no process.
func readProcess(path string) (procfacts.Process, bool) {
	b, err := safeio.ReadOwned(path, 4096)
	if err != nil {
		return procfacts.Process{}, false
	}
	var p procfacts.Process
	if json.Unmarshal(b, &p) != nil || !p.Known() {
		return procfacts.Process{}, false
	}
	return p, true
}
