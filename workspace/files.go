package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relay-baton/relay-baton/safeio"
)

// relay-baton's files are opened so that a hostile folder cannot make it
// hang or write elsewhere, through safeio (OpenChecked, ReadOwned,
// OpenAppend, WriteFile): never blocking in open(2) on a FIFO, only
// regular files read or written, and every file written opened with
// O_NOFOLLOW (a symlink in its place is refused) and created 0600.

// History is a line history file (the room's .ai-session/room_history):
// read and appended by relay-baton itself, with O_NOFOLLOW, 0600, regular
// files only, instead of by the line editor, which would follow a symlink
// and create the file 0644.
type History struct {
	Path  string
	Limit int // lines kept (0: 1000)
}

// Load returns the newest Limit lines. A file over twice the limit is
// rewritten with only those (temporary file and rename). A missing file is
// created, empty.
func (h History) Load() ([]string, error) {
	limit := h.Limit
	if limit <= 0 {
		limit = 1000
	}
	b, err := safeio.ReadOwned(h.Path, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		f, err := safeio.OpenAppend(h.Path) // created now (0600), as the line editor did
		if err == nil {
			f.Close()
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	if len(lines) > limit {
		keep := lines[len(lines)-limit:]
		if len(lines) > 2*limit {
			_ = safeio.WriteFileAtomic(h.Path, []byte(strings.Join(keep, "\n")+"\n"), 0o600, false)
		}
		lines = keep
	}
	return lines, nil
}

// Append adds one entry (a line; newlines in it become spaces).
func (h History) Append(line string) error {
	f, err := safeio.OpenAppend(h.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(strings.ReplaceAll(line, "\n", " ") + "\n")
	return err
}

// ignoreAll is the .gitignore relay-baton puts in the folders it owns
// (.ai-session, .claude/session-chat): their files are relay-baton's state
// (the conversation log, raw agent output, inboxes, locks), never changes of
// the repository, so `git add -A` must not pick them up.
const ignoreAll = "# relay-baton's own state: not part of the repository.\n*\n"

// EnsureIgnored makes dir/.gitignore ignore everything: it writes one, or
// repairs one whose last pattern is not "*" (a repository can commit a
// "!*" there so that `git add -A` picks up inboxes and logs) by appending
// a "*" line, which overrides every line before it; the lines already
// there are kept. It never writes through a symlink. It returns why the
// file could not be made right, for a warning ("" when it is right).
func EnsureIgnored(dir string) string {
	p := filepath.Join(dir, ".gitignore")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safeio.ONoFollow, 0o600)
	if err == nil {
		_, err = f.WriteString(ignoreAll)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Sprintf("cannot write %s (%v): add a .gitignore of \"*\" there so git does not offer relay-baton's state for commit", p, err)
		}
		return ""
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "" // no folder
	}
	b, rerr := safeio.ReadOwned(p, 64<<10)
	if rerr == nil && ignoresAll(b) {
		return ""
	}
	if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
		return fmt.Sprintf("%s is %s, not relay-baton's \"ignore everything\" file: git may offer relay-baton's state there for commit; replace it with a file holding \"*\"", p, safeio.FileKind(fi.Mode()))
	}
	if rerr != nil {
		return fmt.Sprintf("cannot read %s (%v): git may offer relay-baton's state there for commit; make its last line \"*\"", p, rerr)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, ignoreAll...)
	if werr := safeio.WriteFileAtomic(p, b, 0o600, false); werr != nil {
		return fmt.Sprintf("%s does not ignore everything and cannot be repaired (%v): git may offer relay-baton's state there for commit; make its last line \"*\"", p, werr)
	}
	return ""
}

// ignoresAll reports whether a .gitignore ignores every file of its folder:
// its last pattern is "*" (git obeys the last pattern that matches, so no
// negation before it lets anything back in).
func ignoresAll(b []byte) bool {
	last := ""
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	return last == "*" || last == "/*" || last == "**"
}
