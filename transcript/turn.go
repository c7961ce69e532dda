package transcript

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/relay-baton/relay-baton/events"
)

// Turns are the looks of a process at the turns that follow messages it
// handed to sessions, a bounded number of them (turnCacheMax; when full
// it starts again empty: the next look at each reads its transcript once
// more). The zero value is ready.
type Turns struct {
	mu sync.Mutex
	m  map[turnKey]*turnScan
}

// Look reads the transcript (or rollout) at path from off: whether a
// delivered message containing needle shows there (a chat message's
// marker), whether a turn end follows it, and the text the model wrote in
// between (its lines joined, as a follow shows it). err is the tail's.
//
// Each look reads only what the transcript gained since the last look at
// the same message: the lanes and the views look again every poll while a
// turn runs, and a transcript is megabytes. A transcript replaced or
// truncated since is read again from the start.
func (c *Turns) Look(path string, off int64, needle string) (shown, ended bool, text string, err error) {
	sc := c.get(turnKey{path, off, needle})
	sc.mu.Lock()
	defer sc.mu.Unlock()
	fi, serr := os.Stat(path)
	if serr != nil {
		return false, false, "", serr
	}
	if sc.ended && sc.err == nil && os.SameFile(sc.file, fi) {
		return true, true, sc.text.String(), nil
	}
	if sc.file == nil || !os.SameFile(sc.file, fi) || fi.Size() < sc.next {
		// First look, or the file was replaced or truncated: from the
		// message's offset (all of it when the file is shorter now).
		from := off
		if fi.Size() < off {
			from = 0
		}
		sc.next, sc.shown, sc.ended, sc.err = from, false, false, nil
		sc.text.Reset()
	}
	sc.file = fi
	sc.read += max(fi.Size()-sc.next, 0)
	sc.err = Tail(context.Background(), TailOptions{Path: path, Offset: sc.next, OnActivity: func(end int64, acts []events.Activity) bool {
		sc.next = end
		for _, a := range acts {
			switch {
			case a.Kind == events.ActDelivered && strings.Contains(a.Text, needle):
				sc.shown = true
			case !sc.shown:
			case a.Kind == events.ActDone:
				sc.ended = true
				return false
			case a.Kind == events.ActText:
				if sc.text.Len() > 0 {
					sc.text.WriteString("\n")
				}
				sc.text.WriteString(a.Text)
			}
		}
		return true
	}})
	return sc.shown, sc.ended, sc.text.String(), sc.err
}

// turnKey names one look: a message searched for in a transcript from an
// offset.
type turnKey struct {
	path   string
	off    int64
	needle string
}

// turnScan is what the looks at one turnKey saw so far: the file read
// (its identity), the offset after the last line that said something,
// and the state there. read counts the bytes the looks had to read (the
// tests hold it to what the transcript gained).
type turnScan struct {
	mu           sync.Mutex
	file         os.FileInfo
	next         int64
	shown, ended bool
	text         strings.Builder
	err          error
	read         int64
}

const turnCacheMax = 256

func (c *Turns) get(k turnKey) *turnScan {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.m[k]; ok {
		return sc
	}
	if c.m == nil || len(c.m) >= turnCacheMax {
		c.m = map[turnKey]*turnScan{}
	}
	sc := &turnScan{}
	c.m[k] = sc
	return sc
}

// BytesRead is what the looks at path's turns read so far (a look reads
// only what the transcript gained since the last one).
func (c *Turns) BytesRead(path string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for k, sc := range c.m {
		if k.path == path {
			sc.mu.Lock()
			n += sc.read
			sc.mu.Unlock()
		}
	}
	return n
}
