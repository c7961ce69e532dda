package room

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

// planDoc is .ai-session/plan.md, the plan the planner writes and every
// later run reads; dir is .ai-session.
type planDoc struct {
	dir string
	now func() time.Time
}

func (p planDoc) path() string { return filepath.Join(p.dir, events.PlanFile) }

// read is the plan's text, or ErrNoPlan.
func (p planDoc) read() (string, error) {
	b, err := readDoc(p.path()) // a FIFO or a link there does not block or lead the room
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoPlan
	}
	return string(b), err
}

// age is how long ago plan.md was written; ok is false without one.
func (p planDoc) age() (age time.Duration, ok bool) {
	// Lstat and a regular file, as read: a FIFO, a folder or a link at
	// plan.md is no plan (Status says what it is instead).
	fi, err := os.Lstat(p.path())
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return max(0, p.now().Sub(fi.ModTime())), true
}
