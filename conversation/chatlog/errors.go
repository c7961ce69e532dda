package chatlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/safeio"
)

// errors.log holds one line per distinct failure: the same message again
// (a TUI that exits can make a lane fail the same way hundreds of times in
// a few milliseconds) counts on its line, which moves to the end:
//
//	2026-12-04T22:51:07.104Z relay-baton: the socket refused: ...
//	2026-12-04T22:51:07.120Z ×222 (last 2026-12-04T22:51:07.170Z) codex queue for thread ...: exit 1
//
// The file stays under MaxErrorsLog: the oldest lines go first.

// MaxErrorsLog bounds a session's errors.log.
const MaxErrorsLog = 64 << 10

// errorsLogTime is the timestamp of errors.log's lines.
const errorsLogTime = "2006-01-02T15:04:05.000Z07:00"

// errorsLine is one line of errors.log.
type errorsLine struct {
	first, last string // timestamps as written
	n           int
	msg         string
}

func (l errorsLine) String() string {
	if l.n <= 1 {
		return l.first + " " + l.msg
	}
	return fmt.Sprintf("%s ×%d (last %s) %s", l.first, l.n, l.last, l.msg)
}

// parseErrorsLine reads a line as written by RecordError (or by an older
// build: "TS message").
func parseErrorsLine(s string) errorsLine {
	ts, rest, _ := strings.Cut(s, " ")
	l := errorsLine{first: ts, last: ts, n: 1, msg: rest}
	if c, after, ok := strings.Cut(rest, " (last "); ok && strings.HasPrefix(c, "×") {
		if n, err := strconv.Atoi(strings.TrimPrefix(c, "×")); err == nil && n > 1 {
			if last, msg, ok := strings.Cut(after, ") "); ok {
				l.n, l.last, l.msg = n, last, msg
			}
		}
	}
	return l
}

// RecordError adds msg to the errors.log at path, under the file's lock
// (hooks of several processes write it): a message already there counts
// one more on its line, which moves to the end; the file is then cut to
// MaxErrorsLog from its oldest line. The file is never read or written
// through a link, and a FIFO in its place is refused without blocking.
func RecordError(path, msg string, now time.Time) error {
	msg = strings.Join(strings.Fields(render.Cut(msg, 2000)), " ")
	f, err := safeio.OpenChecked(path, os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		return err
	}
	defer f.Close()
	_ = f.Chmod(0o600)
	_ = filelock.Wait(f) // without locks (a portable build), best effort
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// A file from an older build may be larger: its newest part is kept.
	from := max(0, fi.Size()-MaxErrorsLog)
	b, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return err
	}
	if from > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	ts := now.UTC().Format(errorsLogTime)
	entry := errorsLine{first: ts, last: ts, n: 1, msg: msg}
	var lines []string
	for _, s := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if s == "" {
			continue
		}
		if l := parseErrorsLine(s); l.msg == msg {
			entry.first, entry.n = l.first, l.n+1
			continue
		}
		lines = append(lines, s)
	}
	lines = append(lines, entry.String())
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	for len(lines) > 1 && size > MaxErrorsLog {
		size -= len(lines[0]) + 1
		lines = lines[1:]
	}
	out := strings.Join(lines, "\n") + "\n"
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt([]byte(out), 0)
	return err
}
