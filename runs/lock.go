package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/safeio"
)

// Holder is who writes a run now: the room whose executor runs in its
// worktree (holder.json beside the run's lock).
type Holder struct {
	PID     int       `json:"pid"`
	Session string    `json:"session,omitempty"` // the room's session id
	Agent   string    `json:"agent,omitempty"`
	Command string    `json:"command,omitempty"`
	Since   time.Time `json:"since"`
}

// BusyError says a run cannot be applied, undone or discarded: an
// executor is writing it (Holder: who; zero when its record could not be
// read).
type BusyError struct {
	Run    string
	Action string // what was refused: apply, undo, discard, run an executor in
	Holder Holder
}

func (e *BusyError) Error() string {
	h := e.Holder
	who := "another relay-baton"
	if h.PID > 0 {
		who = fmt.Sprintf("the relay-baton of pid %d", h.PID)
		if h.Session != "" {
			who += fmt.Sprintf(" (the room of session %s)", h.Session)
		}
	}
	what := "an executor"
	if h.Agent == "" && h.Command != "" {
		what = "/" + h.Command // an apply, undo or discard under way
	}
	if h.Agent != "" {
		what = h.Agent
		if h.Command != "" {
			what += " /" + h.Command
		}
	}
	since := ""
	if !h.Since.IsZero() {
		since = " since " + h.Since.Local().Format("15:04:05")
	}
	return fmt.Sprintf("cannot %s run %s now: %s is writing it, running%s in %s. Wait for that run to end, or stop it there (Ctrl-C in that room), then try again (relay-baton runs lists the runs)",
		e.Action, e.Run, what, since, who)
}

// ErrBusy matches every BusyError (errors.Is).
var ErrBusy = errors.New("the run is being written by its executor")

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

func (r *Run) lockPath() string   { return filepath.Join(r.dir, "lock") }
func (r *Run) holderPath() string { return filepath.Join(r.dir, "holder.json") }

// Hold takes the run's lock for its executor, for as long as the
// executor runs: Apply, Undo and Discard of the run are refused
// (BusyError) in every process until release is called, and a second
// Hold too. Without file locks (a system relay-baton does not support)
// it holds nothing. release may be called more than once.
func (r *Run) Hold(h Holder) (release func(), err error) {
	return r.hold(h, "run an executor in")
}

// holdFor takes the run's lock for an apply, undo or discard by this
// process (action): refused while an executor holds it, and an executor
// is refused meanwhile.
// Under the lock the run's record is read again: another process (a
// second screen, a one-shot command) may have applied, undone or
// discarded the run since this one read it (ElsewhereError; nothing is
// done then).
func (r *Run) holdFor(action string) (release func(), err error) {
	if _, err := os.Stat(r.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, &ElsewhereError{Run: r.ID, Action: action}
	}
	release, err = r.hold(Holder{PID: os.Getpid(), Command: action, Since: time.Now()}, action)
	if err != nil {
		return nil, err
	}
	now, lerr := loadDir(r.dir)
	switch {
	case errors.Is(lerr, fs.ErrNotExist):
		release()
		return nil, &ElsewhereError{Run: r.ID, Action: action}
	case lerr == nil && now.State != r.State:
		release()
		return nil, &ElsewhereError{Run: r.ID, Action: action, State: now.State, At: now.AppliedAt}
	}
	return release, nil
}

// ElsewhereError says another process applied, undid or discarded a run
// after this one read it: nothing was done here.
type ElsewhereError struct {
	Run    string
	Action string    // what was not done: apply, undo, discard
	State  string    // the run's state now (Applied); "" when it is gone (discarded, or its apply taken out)
	At     time.Time // when it was applied
}

func (e *ElsewhereError) Error() string {
	if e.State == Applied {
		at := ""
		if !e.At.IsZero() {
			at = " at " + e.At.Local().Format("15:04:05")
		}
		return fmt.Sprintf("another screen (or relay-baton apply) applied run %s%s, after this one read it: nothing was done here (/undo takes out what that apply wrote; relay-baton runs lists the runs)", e.Run, at)
	}
	if e.State != "" {
		return fmt.Sprintf("another screen changed run %s after this one read it (it is %s now): nothing was done here (relay-baton runs lists the runs)", e.Run, e.State)
	}
	return fmt.Sprintf("another screen (or relay-baton undo) discarded run %s or took out its apply, after this one read it: nothing was done here (relay-baton runs lists the runs)", e.Run)
}

// ErrElsewhere matches every ElsewhereError (errors.Is).
var ErrElsewhere = errors.New("the run was changed by another process")

func (e *ElsewhereError) Is(target error) bool { return target == ErrElsewhere }

func (r *Run) hold(h Holder, action string) (release func(), err error) {
	f, err := os.OpenFile(r.lockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the run: %w", err)
	}
	ok, err := filelock.Try(f)
	if err != nil {
		f.Close()
		return func() {}, nil
	}
	if !ok {
		f.Close()
		return nil, r.busy(action)
	}
	// Written under the lock, removed before it is let go: the record
	// read beside a held lock is its holder's.
	if b, err := json.Marshal(h); err == nil {
		tmp := r.holderPath() + ".tmp"
		if os.WriteFile(tmp, b, 0o600) == nil {
			os.Rename(tmp, r.holderPath())
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			os.Remove(r.holderPath())
			f.Close()
		})
	}, nil
}

// Busy returns a BusyError when an executor holds the run (action: what
// the caller would do), nil when none does.
func (r *Run) Busy(action string) error {
	held, err := filelock.Held(r.lockPath())
	if err != nil || !held {
		return nil // no lock file: never held; no locks: nothing to ask
	}
	return r.busy(action)
}

func (r *Run) busy(action string) error {
	e := &BusyError{Run: r.ID, Action: action}
	if b, err := safeio.ReadRegular(r.holderPath(), 64<<10); err == nil {
		json.Unmarshal(b, &e.Holder)
	}
	return e
}
