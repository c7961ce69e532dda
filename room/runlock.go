package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/workspace"
)

// One agent run at a time per repository, whichever screen starts it (a
// terminal room, the page of relay-baton serve, a one-shot command): the
// run holds an exclusive lock on .ai-session/run.lock (flock, LockFileEx;
// the system drops it when the process dies), and says who it is in
// .ai-session/run.holder. Another screen reads both before it previews
// anything that would start an agent, and offers nothing while the lock
// is held.

// RunLockFile and RunHolderFile are the lock and its holder's record,
// inside .ai-session.
const (
	RunLockFile   = "run.lock"
	RunHolderFile = "run.holder"
)

// RunHolder is the agent run that holds a repository's run lock.
type RunHolder struct {
	PID     int       `json:"pid"`
	Agent   string    `json:"agent"`
	Command string    `json:"command"`
	Screen  string    `json:"screen"` // "relay-baton chat", "relay-baton serve's page", "relay-baton plan"
	Started time.Time `json:"started"`
}

// Text is the holder in words: "claude /plan, pid 4242, in relay-baton
// serve's page, started 12s ago".
func (h *RunHolder) Text(now time.Time) string {
	s := fmt.Sprintf("%s /%s, pid %d", render.InertLine(h.Agent), render.InertLine(h.Command), h.PID)
	if h.Screen != "" {
		s += ", in " + render.InertLine(h.Screen)
	}
	if !h.Started.IsZero() {
		s += ", started " + render.Ago(now.Sub(h.Started)) + " ago"
	}
	return s
}

// RunHeldError is an agent run refused because another one holds the
// repository.
type RunHeldError struct {
	Holder *RunHolder
	now    time.Time
}

func (e *RunHeldError) Error() string {
	who := "another relay-baton process (its record is unreadable)"
	if e.Holder != nil {
		who = e.Holder.Text(e.now)
	}
	return "another agent run holds this repository: " + who + ". Nothing ran: wait for it to end, or stop it where it runs (Ctrl-C in its room, Stop in the page)"
}

// RunHeldBy reads whether an agent run holds the repository at root: nil
// when none does. A holder whose record cannot be read is returned
// without its facts (PID 0).
func RunHeldBy(root string) *RunHolder {
	sd := workspace.SessionDir(root)
	held, err := filelock.Held(filepath.Join(sd, RunLockFile))
	if err != nil || !held {
		return nil
	}
	h := &RunHolder{}
	if b, err := events.ReadOwned(filepath.Join(sd, RunHolderFile), 4096); err == nil {
		_ = json.Unmarshal(b, h)
	}
	return h
}

// runLock is the engine's hold of the repository's run lock: reentrant (a
// /continue loop holds it across its steps, each of which takes it too).
// An engine that writes nothing (writes false) or has no repository takes
// none and sees none held elsewhere.
type runLock struct {
	root, sessionDir string
	writes           bool
	now              func() time.Time
	say              func(format string, a ...any)
	screenName       string      // SetScreen
	held             atomic.Bool // count > 0, for other goroutines (a Host's requests)
	f                *os.File
	count            int
}

// screen names the engine's screen in the run lock's record (SetScreen;
// else the command line's program and subcommand: "relay-baton chat",
// "relay-baton plan").
func (l *runLock) screen() string {
	if l.screenName != "" {
		return l.screenName
	}
	name := "relay-baton"
	if len(os.Args) > 0 {
		name = filepath.Base(os.Args[0])
	}
	if strings.Contains(name, "relay-baton") && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		name += " " + os.Args[1]
	}
	return name
}

// SetScreen names the screen this engine serves, for the run lock's
// record another screen shows ("relay-baton serve's page").
func (e *Engine) SetScreen(name string) { e.lock.screenName = name }

// heldElsewhere is the holder of the repository's run lock when it is not
// this engine; nil when no run holds it or this engine does.
func (l *runLock) heldElsewhere() *RunHolder {
	if l.held.Load() || l.root == "" || !l.writes {
		return nil
	}
	return RunHeldBy(l.root)
}

// refuse is the error for a run while another holds the repository
// (nil when none does): said before any preview, so that this screen
// offers nothing that would start a second run.
func (l *runLock) refuse() error {
	if h := l.heldElsewhere(); h != nil {
		return &RunHeldError{Holder: h, now: l.now()}
	}
	return nil
}

// hold takes the repository's run lock for an agent run (again, when
// this engine holds it already). A read-only engine takes none.
func (l *runLock) hold(agent, command string) (release func(), err error) {
	if !l.writes || l.root == "" {
		return func() {}, nil
	}
	if l.count > 0 {
		l.count++
		return l.release, nil
	}
	sd := l.sessionDir
	f, err := events.OpenChecked(filepath.Join(sd, RunLockFile), os.O_CREATE|os.O_RDWR, 0o600, true)
	if err != nil {
		return nil, fmt.Errorf("the run lock .ai-session/%s: %w (remove it if it is not a regular file)", RunLockFile, err)
	}
	ok, err := filelock.Try(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the run lock .ai-session/%s: %w", RunLockFile, err)
	}
	if !ok {
		f.Close()
		return nil, &RunHeldError{Holder: RunHeldBy(l.root), now: l.now()}
	}
	b, _ := json.Marshal(RunHolder{PID: os.Getpid(), Agent: agent, Command: command, Screen: l.screen(), Started: l.now().UTC()})
	if err := workspace.WriteFile(filepath.Join(sd, RunHolderFile), b); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.say("warning: the run lock's record .ai-session/%s not written: %v (other screens see the lock without who holds it)", RunHolderFile, err)
	}
	l.f, l.count = f, 1
	l.held.Store(true)
	return l.release, nil
}

func (l *runLock) release() {
	if l.count == 0 {
		return
	}
	l.count--
	if l.count > 0 {
		return
	}
	_ = os.Remove(filepath.Join(l.sessionDir, RunHolderFile)) // before the lock goes: no record outlives it
	l.f.Close()
	l.held.Store(false)
	l.f = nil
}
