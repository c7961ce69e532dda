// Package runlock is one agent run at a time per repository, whichever
// screen starts it (a terminal room, the page of relay-baton serve, a
// one-shot command): the run holds an exclusive lock on
// .ai-session/run.lock (flock, LockFileEx; the system drops it when the
// process dies), and says who it is in .ai-session/run.holder. Another
// screen reads both before it previews anything that would start an
// agent, and offers nothing while the lock is held.
package runlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// LockFile and HolderFile are the lock and its holder's record,
// inside .ai-session.
const (
	LockFile   = "run.lock"
	HolderFile = "run.holder"
)

// Holder is the agent run that holds a repository's run lock.
type Holder struct {
	PID     int       `json:"pid"`
	Agent   string    `json:"agent"`
	Command string    `json:"command"`
	Screen  string    `json:"screen"` // "relay-baton chat", "relay-baton serve's page", "relay-baton plan"
	Started time.Time `json:"started"`
}

// Text is the holder in words: "claude /plan, pid 4242, in relay-baton
// serve's page, started 12s ago".
func (h *Holder) Text(now time.Time) string {
	s := fmt.Sprintf("%s /%s, pid %d", render.InertLine(h.Agent), render.InertLine(h.Command), h.PID)
	if h.Screen != "" {
		s += ", in " + render.InertLine(h.Screen)
	}
	if !h.Started.IsZero() {
		s += ", started " + render.Ago(now.Sub(h.Started)) + " ago"
	}
	return s
}

// HeldError is an agent run refused because another one holds the
// repository.
type HeldError struct {
	Holder *Holder
	Now    time.Time // when the refusal was said (the holder's age)
}

func (e *HeldError) Error() string {
	who := "another relay-baton process (its record is unreadable)"
	if e.Holder != nil {
		who = e.Holder.Text(e.Now)
	}
	return "another agent run holds this repository: " + who + ". Nothing ran: wait for it to end, or stop it where it runs (Ctrl-C in its room, Stop in the page)"
}

// HeldBy reads whether an agent run holds the repository at root: nil
// when none does. A holder whose record cannot be read is returned
// without its facts (PID 0).
func HeldBy(root string) *Holder {
	sd := workspace.SessionDir(root)
	held, err := filelock.Held(filepath.Join(sd, LockFile))
	if err != nil || !held {
		return nil
	}
	h := &Holder{}
	if b, err := safeio.ReadOwned(filepath.Join(sd, HolderFile), 4096); err == nil {
		_ = json.Unmarshal(b, h)
	}
	return h
}

// Lock is an engine's hold of the repository's run lock: reentrant (a
// /continue loop holds it across its steps, each of which takes it too).
// An engine that writes nothing (writes false) or has no repository takes
// none and sees none held elsewhere.
type Lock struct {
	root, sessionDir string
	writes           bool
	now              func() time.Time
	say              func(format string, a ...any)
	screenName       string      // SetScreen
	held             atomic.Bool // count > 0, for other goroutines (a Host's requests)
	f                *os.File
	count            int
}

// Screen names the engine's screen in the run lock's record (SetScreen;
// else the command line's program and subcommand: "relay-baton chat",
// "relay-baton plan").
func (l *Lock) Screen() string { return l.screen() }

func (l *Lock) screen() string {
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

// New is the lock of the repository root (its .ai-session is sessionDir)
// for an engine: one that writes nothing (writes false) takes none. say
// warns when the holder's record cannot be written.
func New(root, sessionDir string, writes bool, now func() time.Time, say func(format string, a ...any)) *Lock {
	return &Lock{root: root, sessionDir: sessionDir, writes: writes, now: now, say: say}
}

// SetScreen names the screen the engine serves, for the record another
// screen shows ("relay-baton serve's page").
func (l *Lock) SetScreen(name string) { l.screenName = name }

// Held reports whether this engine holds the lock (an agent run of its
// runs); safe from any goroutine.
func (l *Lock) Held() bool { return l.held.Load() }

// HeldElsewhere is the holder of the repository's run lock when it is not
// this engine; nil when no run holds it or this engine does.
func (l *Lock) HeldElsewhere() *Holder {
	if l.held.Load() || l.root == "" || !l.writes {
		return nil
	}
	return HeldBy(l.root)
}

// Refuse is the error for a run while another holds the repository
// (nil when none does): said before any preview, so that this screen
// offers nothing that would start a second run.
func (l *Lock) Refuse() error {
	if h := l.HeldElsewhere(); h != nil {
		return &HeldError{Holder: h, Now: l.now()}
	}
	return nil
}

// heldTries is how many more times Hold tries a lock it found held, 5 ms
// apart, before it says another run holds the repository.
const heldTries = 20

// Hold takes the repository's run lock for an agent run (again, when
// this engine holds it already). A read-only engine takes none.
func (l *Lock) Hold(agent, command string) (release func(), err error) {
	if !l.writes || l.root == "" {
		return func() {}, nil
	}
	if l.count > 0 {
		l.count++
		return l.release, nil
	}
	sd := l.sessionDir
	f, err := safeio.OpenChecked(filepath.Join(sd, LockFile), os.O_CREATE|os.O_RDWR, 0o600, true)
	if err != nil {
		return nil, fmt.Errorf("the run lock .ai-session/%s: %w (remove it if it is not a regular file)", LockFile, err)
	}
	ok, err := filelock.Try(f)
	// Another screen asking whether a run holds the repository (HeldBy)
	// holds a shared lock for an instant: a run's lock outlives a few
	// tries, a question does not.
	for try := 0; err == nil && !ok && try < heldTries; try++ {
		time.Sleep(5 * time.Millisecond)
		ok, err = filelock.Try(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the run lock .ai-session/%s: %w", LockFile, err)
	}
	if !ok {
		f.Close()
		return nil, &HeldError{Holder: HeldBy(l.root), Now: l.now()}
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Agent: agent, Command: command, Screen: l.screen(), Started: l.now().UTC()})
	if err := safeio.WriteFile(filepath.Join(sd, HolderFile), b); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.say("warning: the run lock's record .ai-session/%s not written: %v (other screens see the lock without who holds it)", HolderFile, err)
	}
	l.f, l.count = f, 1
	l.held.Store(true)
	return l.release, nil
}

func (l *Lock) release() {
	if l.count == 0 {
		return
	}
	l.count--
	if l.count > 0 {
		return
	}
	_ = os.Remove(filepath.Join(l.sessionDir, HolderFile)) // before the lock goes: no record outlives it
	l.f.Close()
	l.held.Store(false)
	l.f = nil
}

// Key tells one holder from the next ("" for none): a token that changes
// when the run lock changes hands.
func (h *Holder) Key() string {
	if h == nil {
		return ""
	}
	return strings.Join([]string{h.Agent, h.Command, h.Screen, h.Started.Format(time.RFC3339Nano), strconv.Itoa(h.PID)}, "\x00")
}
