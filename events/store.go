package events

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// MaxLineBytes caps one event line. Text is a summary; large content goes
// into a file named in Refs.
const MaxLineBytes = 64 << 10

// Log appends events to a conversation.jsonl file. It is safe for
// concurrent use, and several processes may append to the same file at once:
// each event is one write(2) on an O_APPEND descriptor.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenLog opens (creating, mode 0600) the log at path for appending.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open conversation log: %w", err)
	}
	return &Log{f: f, path: path}, nil
}

// Path returns the file's path.
func (l *Log) Path() string { return l.path }

// Append writes e as one line.
func (l *Log) Append(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	if len(b)+1 > MaxLineBytes {
		return fmt.Errorf("event %s is %d bytes, over the %d-byte line cap: put large content in a file and name it in refs", e.ID, len(b), MaxLineBytes)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// Stats counts what a scan saw.
type Stats struct {
	Lines     int // non-blank lines
	Events    int // lines delivered as events
	Malformed int // lines that were not a valid event
	TooLong   int // lines over the read cap, skipped
}

// Skipped is the number of lines that were not delivered.
func (s Stats) Skipped() int { return s.Malformed + s.TooLong }

// Scan reads events from r one line at a time, never holding more than one
// line, and calls fn for each valid one. Blank lines are ignored; malformed
// and oversized lines are skipped and counted. fn's error stops the scan.
func Scan(r io.Reader, fn func(Event) error) (Stats, error) {
	var st Stats
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		st.Lines++
		var e Event
		if json.Unmarshal(line, &e) != nil || e.Validate() != nil {
			st.Malformed++
			continue
		}
		st.Events++
		if err := fn(e); err != nil {
			return st, err
		}
	}
	return st, sc.Err()
}
