package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/safeio"
)

// MaxLine caps a transcript line the tail parses; a longer line
// is skipped (reported through OnSkip) without being held in memory.
const MaxLine = 8 << 20

// TailOptions configures Tail.
type TailOptions struct {
	Path   string
	Offset int64 // byte offset to start from (0 = the beginning)
	Follow bool  // keep following after reaching the end
	// OnActivity receives each line's activities with the offset just
	// after the line. Returning false stops the tail (Tail returns nil).
	OnActivity func(end int64, acts []events.Activity) bool
	// OnSkip, when set, hears about lines that were skipped (too long, not
	// JSON) and about a truncated or replaced file.
	OnSkip func(offset int64, why string)
	// Poll is the fallback re-check interval (default 1 s); fsnotify on the
	// file's directory wakes the tail sooner.
	Poll time.Duration
	// OnCaughtUp, when set, is called each time a following tail has
	// handed over every complete line of the file; more=false stops the
	// tail (Tail returns nil); again > 0 reads the file again within that
	// time even if nothing wakes the tail sooner.
	OnCaughtUp func() (more bool, again time.Duration)
}

// Tail reads complete lines of a Claude Code transcript from opts.Offset
// and hands their activities to opts.OnActivity. A torn last line waits for
// its end; a line over MaxLine is skipped; a truncated or
// replaced file is read again from its start. Without Follow it returns at
// the end of the file; with Follow it returns when ctx ends (nil) or when
// OnActivity returns false. A missing file is waited for when following.
func Tail(ctx context.Context, opts TailOptions) error {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	skip := func(off int64, why string) {
		if opts.OnSkip != nil {
			opts.OnSkip(off, why)
		}
	}
	var wake <-chan fsnotify.Event
	var werrs <-chan error
	if opts.Follow {
		if w, err := fsnotify.NewWatcher(); err == nil {
			defer closeWatcher(w)
			if w.Add(filepath.Dir(opts.Path)) == nil {
				wake, werrs = w.Events, w.Errors
			}
		}
	}
	t := &tailer{opts: opts, off: opts.Offset, skip: skip, rollout: IsRolloutPath(opts.Path)}
	defer t.close()
	ticker := time.NewTicker(opts.Poll)
	defer ticker.Stop()
	for {
		more, err := t.step()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		if !opts.Follow && t.atEOF {
			return nil
		}
		if !t.atEOF {
			continue
		}
		var soon <-chan time.Time
		if opts.OnCaughtUp != nil {
			more, again := opts.OnCaughtUp()
			if !more {
				return nil
			}
			if again > 0 {
				t := time.NewTimer(again)
				soon = t.C
				defer t.Stop()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-soon:
		case <-ticker.C:
		case ev, ok := <-wake:
			if !ok {
				wake = nil
			} else if filepath.Clean(ev.Name) != filepath.Clean(opts.Path) {
				continue
			}
		case <-werrs:
		}
	}
}

type tailer struct {
	opts     TailOptions
	f        *os.File
	fi       os.FileInfo
	off      int64     // offset of the next unread byte
	bufs     [2][]byte // read buffers: the one parsed, the one read ahead
	cur      int       // the buffer of the last read
	ahead    bool      // bufs[cur^1] holds a read ahead: aheadN bytes, aheadErr
	aheadN   int
	aheadErr error
	pending  []byte // an incomplete last line
	// seal is the last bytes before off as they were read: a file rewritten
	// in place (same inode, now larger) no longer has them there.
	seal    []byte
	sealBuf [sealSize]byte
	discard bool // inside an over-long line
	atEOF   bool
	skip    func(int64, string)
	done    bool // the last activity passed on was ActDone
	// items are split's results, two slices used in turn: while the
	// lines of one read are parsed, the items of the read before (held)
	// are delivered.
	items   [2][]item
	ic      int    // the items slice split fills next
	held    []item // parsed, not yet delivered
	rollout bool   // a Codex rollout (ParseRolloutLine), not a Claude Code transcript
}

// collapseDone drops an ActDone that follows another one with nothing in
// between (end_turn, then turn_duration / stop_hook_summary lines).
func (t *tailer) collapseDone(acts []events.Activity) []events.Activity {
	out := acts[:0]
	for _, a := range acts {
		if a.Kind == events.ActDone {
			if t.done {
				continue
			}
			t.done = true
		} else if a.Kind != events.ActUsage {
			t.done = false
		}
		out = append(out, a)
	}
	return out
}

func (t *tailer) close() {
	t.ahead = false
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// step reads what is available; more=false when OnActivity asked to stop.
func (t *tailer) step() (more bool, err error) {
	t.atEOF = false
	if t.f == nil {
		f, err := safeio.OpenRegular(t.opts.Path)
		if errors.Is(err, safeio.ErrNotRegular) {
			what := "not a file"
			if fi, serr := os.Stat(t.opts.Path); serr == nil {
				what = safeio.FileKind(fi.Mode())
			}
			return false, fmt.Errorf("transcript %s is not a regular file but %s: check the session's transcript path with `relay-baton targets`", t.opts.Path, what)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && t.opts.Follow {
				t.atEOF = true
				return true, nil
			}
			return false, transcriptError(t.opts.Path, err)
		}
		fi, _ := f.Stat()
		t.f, t.fi = f, fi
		if fi != nil && t.off > fi.Size() {
			t.skip(t.off, "transcript is shorter than the start offset: reading it from the start")
			t.off = 0
		}
		if _, err := f.Seek(t.off, io.SeekStart); err != nil {
			return false, err
		}
	}
	// Replaced or truncated?
	if cur, err := os.Stat(t.opts.Path); err == nil {
		if t.fi != nil && !os.SameFile(cur, t.fi) {
			if !t.flush() {
				return false, nil
			}
			t.skip(t.off, "transcript was replaced: reading the new file from the start")
			t.close()
			t.off, t.pending, t.discard = 0, nil, false
			return true, nil
		}
		rewritten := false
		if cur.Size() >= t.off && len(t.seal) > 0 && !t.ahead {
			var now [sealSize]byte
			n, _ := t.f.ReadAt(now[:len(t.seal)], t.off-int64(len(t.seal)))
			rewritten = !bytes.Equal(now[:n], t.seal)
		}
		if cur.Size() < t.off || rewritten {
			if !t.flush() {
				return false, nil
			}
			if rewritten {
				t.skip(t.off, "transcript was rewritten in place: reading it from the start")
			} else {
				t.skip(t.off, "transcript was truncated: reading it from the start")
			}
			t.off, t.pending, t.discard, t.ahead, t.seal = 0, nil, false, false, nil
			if _, err := t.f.Seek(0, io.SeekStart); err != nil {
				return false, err
			}
		}
	}
	var n int
	var buf []byte
	if t.ahead {
		// Read ahead during the last step.
		t.ahead, t.cur = false, t.cur^1
		buf, n, err = t.bufs[t.cur], t.aheadN, t.aheadErr
	} else {
		if t.bufs[t.cur] == nil {
			t.bufs[t.cur] = make([]byte, readSize)
		}
		buf = t.bufs[t.cur]
		n, err = t.f.Read(buf)
	}
	if n == 0 {
		if !t.flush() {
			return false, nil
		}
		if err != nil && err != io.EOF {
			return false, transcriptError(t.opts.Path, err)
		}
		t.atEOF = true
		return true, nil
	}
	start := t.off
	items := t.split(buf[:n])
	// Remember how the data before the new offset looked.
	if k := min(sealSize, n); k > 0 {
		copy(t.sealBuf[:], buf[n-k:n])
		t.seal = t.sealBuf[:k]
	} else if t.off != start {
		t.seal = nil
	}
	wait := parseItems(items, t.rollout)
	full := n == len(buf) && err == nil
	if full {
		// More is likely there: read it into the other buffer while the
		// lines of this one are parsed (the items held from the last read
		// are parsed already: they no longer point into a buffer).
		next := &t.bufs[t.cur^1]
		if *next == nil {
			*next = make([]byte, readSize)
		}
		t.aheadN, t.aheadErr = t.f.Read(*next)
		t.ahead = true
	}
	more = t.flush() // the last read's items, while this one's are parsed
	wait()
	if !more {
		return false, nil
	}
	t.held = items
	if !full {
		// Nothing more yet: deliver now rather than at the next read.
		return t.flush(), nil
	}
	return true, nil
}

// flush delivers the held items in file order; false when OnActivity
// asked to stop.
func (t *tailer) flush() bool {
	items := t.held
	t.held = nil
	for i := range items {
		it := &items[i]
		if it.why != "" {
			t.skip(it.end, it.why)
			continue
		}
		if it.err != nil {
			t.skip(it.end, it.err.Error())
			continue
		}
		acts := t.collapseDone(it.acts)
		if len(acts) > 0 && t.opts.OnActivity != nil && !t.opts.OnActivity(it.end, acts) {
			return false
		}
	}
	return true
}

// readSize is how much of the transcript one step reads.
const readSize = 1 << 20

// sealSize is how many bytes before the offset the tail checks to notice
// a transcript rewritten in place.
const sealSize = 64

// utf8BOM is a byte-order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// item is one thing a step found, in file order: a line to parse (and its
// activities once parsed), or a reason to skip.
type item struct {
	end  int64 // offset just after the line
	line []byte
	why  string // a skip notice
	acts []events.Activity
	err  error
}

// split cuts data into complete lines, keeping a torn last line in
// t.pending and passing over lines beyond MaxLine.
func (t *tailer) split(data []byte) []item {
	items := t.items[t.ic][:0]
	tooLong := fmt.Sprintf("line over %d MB skipped", MaxLine>>20)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !t.discard {
				t.pending = append(t.pending, data...)
				if len(t.pending) > MaxLine {
					items = append(items, item{end: t.off, why: tooLong})
					t.pending, t.discard = nil, true
				}
			}
			t.off += int64(len(data))
			break
		}
		chunk := data[:i]
		t.off += int64(i + 1)
		data = data[i+1:]
		if t.discard {
			t.discard = false
			continue
		}
		line := chunk
		if len(t.pending) > 0 {
			// The line began in an earlier read: it gets its own copy, as
			// t.pending is reused.
			line = append(t.pending, chunk...)
			t.pending = nil
		}
		if len(line) > MaxLine {
			items = append(items, item{end: t.off, why: tooLong})
			continue
		}
		if t.off == int64(len(line))+1 {
			line = bytes.TrimPrefix(line, utf8BOM) // the file's first line
		}
		items = append(items, item{end: t.off, line: line})
	}
	t.items[t.ic] = items
	t.ic ^= 1
	return items
}

// parseItems parses the lines of items; with more than one CPU and enough
// bytes, in parallel (each line is parsed on its own; order is kept by the
// caller, which delivers items in file order). The caller calls the
// returned wait before it reads the items; wait parses too, so the calling
// goroutine is one of the workers once it has nothing else to do.
//
// The items are cut into runs of about runBytes, which the workers take in
// turn: lines differ a hundredfold in cost per byte (a progress line is
// passed over by skipLine, a tool result is parsed whole), so equal shares
// of bytes fixed in advance leave one worker idle while the other works.
func parseItems(items []item, rollout bool) (wait func()) {
	total := 0
	for i := range items {
		total += len(items[i].line)
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	if workers < 2 || total < 128<<10 || len(items) < 2 {
		parseRange(items, rollout)
		return func() {}
	}
	var runs [][]item
	start, acc := 0, 0
	for i := range items {
		acc += len(items[i].line)
		if acc >= runBytes {
			runs = append(runs, items[start:i+1])
			start, acc = i+1, 0
		}
	}
	if start < len(items) {
		runs = append(runs, items[start:])
	}
	var next atomic.Int32
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(runs) {
				return
			}
			parseRange(runs[k], rollout)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	return func() {
		work()
		wg.Wait()
	}
}

// runBytes is about how many bytes of lines a worker of parseItems takes
// at a time.
const runBytes = 32 << 10

func parseRange(items []item, rollout bool) {
	for i := range items {
		it := &items[i]
		if it.why != "" {
			continue
		}
		if rollout {
			it.acts, it.err = ParseRolloutLine(it.line)
			it.line = nil
			continue
		}
		if skipLine(it.line) {
			continue
		}
		it.acts, it.err = ParseLine(it.line)
		it.line = nil
	}
}

// Size returns the transcript's current size (the offset to tail from for
// what comes next), 0 when it does not exist.
func Size(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// closeWatcher closes an fsnotify watcher in the background: Close waits
// for the watcher's reader to wake (about 8 ms with inotify), which would
// otherwise sit between a claim and its delivery.
func closeWatcher(w *fsnotify.Watcher) { go w.Close() }

// transcriptError says why a transcript could not be read, and what to do.
func transcriptError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("transcript %s does not exist: the session has not written it yet or it was removed; `relay-baton targets` lists the live sessions", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot read transcript %s: permission denied: run as the user who runs the session, or fix the file's mode", path)
	}
	return fmt.Errorf("read transcript %s: %w", path, err)
}
