package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/relay-baton/relay-baton/safeio"
)

// MaxLineBytes caps one event line on write. Text is a summary; large
// content goes into a file named in Refs.
const MaxLineBytes = 64 << 10

// MaxReadLineBytes caps one line on read: a longer line (written by some
// other tool, or garbage) is skipped and counted as TooLong without ever
// being held in memory whole.
const MaxReadLineBytes = 1 << 20

// Log appends events to a conversation.jsonl file. It is safe for
// concurrent use, and several processes may append to the same file at once:
// each event is one write(2) on an O_APPEND descriptor, so lines never
// interleave.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	path string
	buf  bytes.Buffer
	// writeFault, when set (tests only), replaces the write of a line: it
	// injects a full disk where no small file system can be mounted.
	writeFault func(f *os.File, b []byte) (int, error)
}

// OpenLog opens (creating, mode 0600) the log at path for appending. The
// parent folder must exist (see workspace.EnsureSessionDir).
func OpenLog(path string) (*Log, error) {
	// O_NOFOLLOW: a repository can commit conversation.jsonl as a symlink
	// to ~/.bashrc; O_NONBLOCK: a FIFO there must not hang the command.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR|safeio.ONoFollow|safeio.ONonBlock, 0o600)
	if err != nil {
		if fi, serr := os.Lstat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("open conversation log: %s is %s, not a regular file: move it aside (relay-baton never writes through a link)", path, safeio.FileKind(fi.Mode()))
		}
		return nil, fmt.Errorf("open conversation log: %w%s", err, writeHint(err))
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open conversation log: %s is %s, not a regular file: move it aside", path, safeio.FileKind(fi.Mode()))
	}
	_ = f.Chmod(0o600) // a log created by an older version may be wider
	return &Log{f: f, path: path}, nil
}

// Path returns the file's path.
func (l *Log) Path() string { return l.path }

// Append writes e as one line. Missing bookkeeping fields (schemaVersion,
// id, ts) are filled in; an event without a role or kind, or whose line
// would exceed MaxLineBytes, is refused.
//
// If the file does not end in a newline (a writer crashed mid-line), the
// line is written with a leading newline in the same write, so the torn
// fragment stays a line of its own (readers skip it) instead of corrupting
// this event.
func (l *Log) Append(e Event) error {
	if e.SchemaVersion == 0 {
		e.SchemaVersion = SchemaVersion
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.TS == "" {
		e.TS = time.Now().UTC().Format(TimeFormat)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
	l.buf.WriteByte('\n') // dropped below unless the file lacks a final newline
	enc := json.NewEncoder(&l.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil { // Encode adds the '\n'
		return fmt.Errorf("encode event: %w", err)
	}
	b := l.buf.Bytes()
	if len(b)-1 > MaxLineBytes {
		return fmt.Errorf("event %s is %d bytes, over the %d-byte line cap: put large content in a file and name it in refs", e.ID, len(b)-1, MaxLineBytes)
	}
	unlock := safeio.LockFile(l.f)
	defer unlock()
	if !l.needsNewline() {
		b = b[1:]
	}
	if _, err := l.write(b); err != nil {
		return fmt.Errorf("append to %s: %w%s", l.path, err, writeHint(err))
	}
	return nil
}

// needsNewline reports whether the file is non-empty and does not end in
// '\n'. Writers hold an flock while checking and writing; a writer that
// does not (another tool) can at worst cause a harmless blank line.
func (l *Log) needsNewline() bool {
	fi, err := l.f.Stat()
	if err != nil || fi.Size() == 0 {
		return false
	}
	var last [1]byte
	if _, err := l.f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false
	}
	return last[0] != '\n'
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// Stats counts what a read saw.
type Stats struct {
	Lines     int // non-blank lines
	Events    int // lines delivered as events
	Malformed int // lines that were not a valid event (bad JSON, not an event, invalid UTF-8)
	TooLong   int // lines over MaxReadLineBytes, skipped unread
	// FirstSkipped is the 1-based line number of the first skipped line
	// (0: none). In a Follow it counts from the starting offset.
	FirstSkipped int
	// FirstError says why the first malformed line was skipped.
	FirstError string
}

// Skipped is the number of lines that were not delivered.
func (s Stats) Skipped() int { return s.Malformed + s.TooLong }

// LineReader is relay-baton's one line reader (the log's readers, an
// agent's output): it splits a stream into lines of any length up to a
// maximum, holding at most that much of one line, and skips a longer line
// (reported, not delivered) instead of failing as bufio.Scanner does.
type LineReader struct {
	br   *bufio.Reader
	acc  []byte
	max  int
	line int // physical line number of the last line returned
}

// NewLineReader reads r through a buffer of bufSize bytes; lines over max
// bytes are skipped.
func NewLineReader(r io.Reader, bufSize, max int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, bufSize), max: max}
}

func newLineReader(r io.Reader) *LineReader { return NewLineReader(r, 64<<10, MaxReadLineBytes) }

// Next returns the next line without its newline; n counts the bytes
// consumed, newline included. terminated is false for a last line with no
// newline (then err is io.EOF or a read error). tooLong lines come back
// empty. At the end, n is 0 and err is io.EOF. The line is valid until the
// next call.
func (lr *LineReader) Next() (line []byte, n int, terminated, tooLong bool, err error) {
	lr.acc = lr.acc[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		n += len(frag)
		switch {
		case err == nil:
			lr.line++
			frag = frag[:len(frag)-1]
			if tooLong || len(lr.acc)+len(frag) > lr.max {
				return nil, n, true, true, nil
			}
			if len(lr.acc) == 0 {
				return frag, n, true, false, nil
			}
			lr.acc = append(lr.acc, frag...)
			return lr.acc, n, true, false, nil
		case err == bufio.ErrBufferFull:
			if !tooLong && len(lr.acc)+len(frag) > lr.max {
				tooLong = true
				lr.acc = lr.acc[:0]
			}
			if !tooLong {
				lr.acc = append(lr.acc, frag...)
			}
		default:
			if n == 0 {
				return nil, 0, false, false, err
			}
			lr.line++
			if tooLong || len(lr.acc)+len(frag) > lr.max {
				return nil, n, false, true, err
			}
			lr.acc = append(lr.acc, frag...)
			return lr.acc, n, false, false, err
		}
	}
}

// handle counts one line and delivers it to fn if it is an event.
func handle(st *Stats, lineNo int, line []byte, tooLong bool, e *Event, fn func(Event) error) error {
	if tooLong {
		st.Lines++
		st.TooLong++
		if st.FirstSkipped == 0 {
			st.FirstSkipped = lineNo
		}
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	st.Lines++
	if err := DecodeEvent(line, e); err != nil {
		st.Malformed++
		if st.FirstSkipped == 0 {
			st.FirstSkipped = lineNo
		}
		if st.FirstError == "" {
			st.FirstError = err.Error()
		}
		return nil
	}
	st.Events++
	return fn(*e)
}

// Scan reads events from r one line at a time, never holding more than one
// line (and never more than MaxReadLineBytes of it), and calls fn for each
// valid one. Blank lines are ignored; malformed, non-event, invalid UTF-8
// and oversized lines are skipped and counted. A last line without a
// newline is read too. fn's error stops the scan and is returned.
func Scan(r io.Reader, fn func(Event) error) (Stats, error) {
	var st Stats
	var e Event
	lr := newLineReader(r)
	for {
		line, n, _, tooLong, err := lr.Next()
		if n > 0 {
			if herr := handle(&st, lr.line, line, tooLong, &e, fn); herr != nil {
				return st, herr
			}
		}
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, err
		}
	}
}

// ErrNoLog is wrapped by ReadFile's error when the log does not exist.
var ErrNoLog = errors.New("no conversation log")

// openForRead opens path for reading with errors that say what to do.
func openForRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|safeio.ONonBlock, 0)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w at %s (nothing recorded yet: events are written by `relay-baton chat`)", ErrNoLog, path)
		case errors.Is(err, fs.ErrPermission):
			return nil, fmt.Errorf("cannot read %s: permission denied (check its owner and mode; the log is created 0600)", path)
		}
		return nil, fmt.Errorf("open conversation log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a conversation log: pass the .jsonl file itself, or move the directory aside", path)
	}
	if !fi.Mode().IsRegular() && path != os.DevNull { // /dev/null: an empty log
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a conversation log: relay-baton reads only regular files (move it aside)", path, safeio.FileKind(fi.Mode()))
	}
	return f, nil
}

// ReadFile streams the events of the log at path to fn (see Scan). A
// missing file gives an error wrapping ErrNoLog (and fs.ErrNotExist).
func ReadFile(path string, fn func(Event) error) (Stats, error) {
	st, _, err := ReadFileFrom(path, 0, false, fn)
	return st, err
}

// ReadFileFrom is ReadFile starting at byte offset. With completeOnly, a
// last line without a newline is left unread (a writer may be mid-line). It
// returns the offset just past the last line consumed, to continue from
// (for instance with Follow).
func ReadFileFrom(path string, offset int64, completeOnly bool, fn func(Event) error) (Stats, int64, error) {
	var st Stats
	f, err := openForRead(path)
	if err != nil {
		return st, offset, err
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return st, offset, fmt.Errorf("seek %s: %w", path, err)
		}
	}
	return readParallel(f, path, offset, completeOnly, fn)
}

// FollowPoll is how often Follow re-checks the file when fsnotify is not
// available (and, as a safety net, even when it is).
var FollowPoll = 250 * time.Millisecond

// Follow delivers the events appended to the log at path from byte offset
// on, as whole lines only, until ctx is done (then it returns ctx.Err()).
// It watches the folder with fsnotify, so a log that is created, replaced or
// truncated is picked up (after a truncation or replacement it starts again
// from the top), and polls every FollowPoll as a fallback. The file may not
// exist yet, nor its folder (.ai-session), but the folder's parent must.
// Stats accumulate over the whole follow.
func Follow(ctx context.Context, path string, offset int64, fn func(Event) error) (Stats, error) {
	var total Stats
	dir := filepath.Dir(path)
	if !isDir(dir) && !isDir(filepath.Dir(dir)) {
		return total, fmt.Errorf("cannot follow %s: folder %s does not exist", path, dir)
	}
	var evC <-chan fsnotify.Event
	var errC <-chan error
	poll := FollowPoll
	w, werr := fsnotify.NewWatcher()
	if werr == nil {
		defer w.Close()
	}
	watching := false
	watch := func() { // once the folder exists (it may be created later)
		if werr == nil && !watching && isDir(dir) && w.Add(dir) == nil {
			watching = true
			evC, errC = w.Events, w.Errors
		}
	}
	watch()
	tick := time.NewTicker(poll)
	defer tick.Stop()

	clean := filepath.Clean(path)
	var last os.FileInfo
	lineBase := 0
	for {
		watch()
		// Start over when the file was truncated or replaced.
		if fi, err := os.Stat(path); err == nil {
			if fi.IsDir() {
				return total, fmt.Errorf("%s is a directory, not a conversation log", path)
			}
			if !fi.Mode().IsRegular() {
				return total, fmt.Errorf("%s is %s, not a conversation log: relay-baton reads only regular files (move it aside)", path, safeio.FileKind(fi.Mode()))
			}
			if fi.Size() < offset || (last != nil && !os.SameFile(last, fi)) {
				offset = 0
			}
			last = fi
			if fi.Size() > offset {
				st, off, err := ReadFileFrom(path, offset, true, fn)
				offset = off
				merge(&total, st, lineBase)
				lineBase += st.Lines
				if err != nil && !errors.Is(err, ErrNoLog) {
					return total, err
				}
			}
		}
	wait:
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case ev, ok := <-evC:
			if !ok {
				evC = nil
				goto wait
			}
			if filepath.Clean(ev.Name) != clean {
				goto wait
			}
		case _, ok := <-errC:
			if !ok {
				errC = nil
			}
		case <-tick.C:
		}
	}
}

func merge(total *Stats, st Stats, lineBase int) {
	total.Lines += st.Lines
	total.Events += st.Events
	total.Malformed += st.Malformed
	total.TooLong += st.TooLong
	if total.FirstSkipped == 0 && st.FirstSkipped != 0 {
		total.FirstSkipped = lineBase + st.FirstSkipped
	}
	if total.FirstError == "" {
		total.FirstError = st.FirstError
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// write writes one line; tests replace it through writeFault.
func (l *Log) write(b []byte) (int, error) {
	if l.writeFault != nil {
		return l.writeFault(l.f, b)
	}
	return l.f.Write(b)
}

// writeHint says what to do about a failed write or open: nothing for
// errors it does not recognise.
func writeHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return " (the disk is full: free some space; this event was not recorded, those before it are intact)"
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return " (the folder is not writable: check its mode and owner, `lsattr` for the immutable flag, and whether the file system is mounted read-only)"
	}
	return ""
}
