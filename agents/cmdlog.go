package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CommandsLogName is the raw-output log inside the session folder.
const CommandsLogName = "commands.log"

// commandLog appends one run's raw output to <SessionDir>/commands.log in
// this format:
//
//	--- <ISO> START <cmd> <args> ---
//	[stdout] ...
//	[stderr] ...
//	--- exit <code> ---
//
// Each record is one write on an O_APPEND descriptor. A nil *commandLog
// logs nothing.
type commandLog struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

func openCommandLog(sessionDir string) (*commandLog, error) {
	if err := os.MkdirAll(sessionDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", sessionDir, err)
	}
	p := filepath.Join(sessionDir, CommandsLogName)
	// O_NOFOLLOW: never append through a symlink a repository committed;
	// O_NONBLOCK: never block on a FIFO there (openNoFollow; Windows has
	// neither, and the check after opening refuses a link there).
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY|openNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w (if it is a link or a named pipe, move it aside)", p, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || !sameAsPath(fi, p) {
		f.Close()
		return nil, fmt.Errorf("open %s: not a regular file: move it aside", p)
	}
	return &commandLog{f: f}, nil
}

// sameAsPath reports whether the open file fi is the file at p itself, not
// the target of a link at p.
func sameAsPath(fi os.FileInfo, p string) bool {
	li, err := os.Lstat(p)
	return err == nil && li.Mode().IsRegular() && os.SameFile(fi, li)
}

func (l *commandLog) write(b []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.Write(b)
}

// maxLoggedArg is how long an argument may be in the START header before it
// is shortened (prompts can be tens of KB).
const maxLoggedArg = 200

func (l *commandLog) start(argv []string) {
	if l == nil {
		return
	}
	var sb strings.Builder
	sb.WriteString("--- ")
	sb.WriteString(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	sb.WriteString(" START")
	for _, a := range argv {
		sb.WriteByte(' ')
		sb.WriteString(headerArg(a))
	}
	sb.WriteString(" ---\n")
	l.write([]byte(sb.String()))
}

// headerArg quotes an argument when needed and shortens a long one to its
// start plus its length.
func headerArg(a string) string {
	if r := []rune(a); len(r) > maxLoggedArg {
		return strconv.Quote(string(r[:80])+"…") + fmt.Sprintf("(%d chars)", len(r))
	}
	if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
		return strconv.Quote(a)
	}
	return a
}

func (l *commandLog) line(stream string, line []byte, tooLong int) {
	if l == nil {
		return
	}
	var b []byte
	if tooLong > 0 {
		b = fmt.Appendf(nil, "[%s] (line of %d bytes skipped)\n", stream, tooLong)
	} else {
		b = make([]byte, 0, len(line)+len(stream)+4)
		b = append(b, '[')
		b = append(b, stream...)
		b = append(b, "] "...)
		b = append(b, line...)
		b = append(b, '\n')
	}
	l.write(b)
}

func (l *commandLog) exit(code int) {
	if l == nil {
		return
	}
	l.write(fmt.Appendf(nil, "--- exit %d ---\n", code))
}

func (l *commandLog) Close() {
	if l != nil {
		_ = l.f.Close()
	}
}
