// Package safeio is relay-baton's one way to open, read and write a file it
// finds by path in a repository or in its own folders (.ai-session,
// .claude/session-chat), so that a hostile folder can neither hang it nor
// lead it elsewhere: open(2) never blocks on a FIFO (O_NONBLOCK, then the
// type is checked on the descriptor), only regular files are read or
// written, a symlink is refused where the file is relay-baton's own
// (O_NOFOLLOW), what is read whole is capped, and a whole file is replaced
// atomically (WriteFileAtomic). Its locks are filelock's. It sits below
// every package that touches a file, events' log included, in the manner of
// cmd/go's lockedfile and robustio and tailscale's atomicfile.
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegular is wrapped by the errors for a path that is not a regular
// file (a FIFO, a device, a socket, a directory, or a symlink where one is
// refused).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooBig is wrapped by ReadRegular's error for a file over its cap.
var ErrTooBig = errors.New("file too big")

// notRegular is the error for p of mode m.
func notRegular(p string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s, %w: move it aside (relay-baton reads and writes only regular files there)", p, FileKind(m), ErrNotRegular)
}

// OpenChecked opens p with flag plus O_NONBLOCK and returns it only when it
// is a regular file; anything else is an error wrapping ErrNotRegular. A
// symlink at p is refused when nofollow (the file is relay-baton's own).
func OpenChecked(p string, flag int, perm fs.FileMode, nofollow bool) (*os.File, error) {
	if nofollow {
		flag |= ONoFollow
	}
	f, err := os.OpenFile(p, flag|ONonBlock, perm)
	if err != nil {
		if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
			// ELOOP for a symlink under O_NOFOLLOW, ENXIO for a FIFO
			// opened for writing with no reader, EISDIR.
			if nofollow || fi.Mode()&fs.ModeSymlink == 0 {
				return nil, notRegular(p, fi.Mode())
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(p, fi.Mode())
	}
	if nofollow && ONoFollow == 0 {
		// No O_NOFOLLOW here (Windows): refuse when the path is a link.
		if li, err := os.Lstat(p); err != nil || !li.Mode().IsRegular() || !os.SameFile(fi, li) {
			f.Close()
			if err == nil {
				return nil, notRegular(p, li.Mode())
			}
			return nil, err
		}
	}
	return f, nil
}

// OpenRegular opens p for reading without blocking on a FIFO; anything but
// a regular file is an error wrapping ErrNotRegular. Symlinks are followed
// (a transcript or a repository's config may be a link).
func OpenRegular(p string) (*os.File, error) {
	return OpenChecked(p, os.O_RDONLY, 0, false)
}

// OpenOwned opens p, one of relay-baton's own files, for reading: as
// OpenRegular, and a symlink at p is refused.
func OpenOwned(p string) (*os.File, error) {
	return OpenChecked(p, os.O_RDONLY, 0, true)
}

// ReadRegular reads p whole (symlinks followed, regular files only, at most
// max bytes, else an error wrapping ErrTooBig) without blocking on a FIFO.
func ReadRegular(p string, max int64) ([]byte, error) {
	f, err := OpenRegular(p)
	if err != nil {
		return nil, err
	}
	return readCapped(f, p, max)
}

// ReadOwned reads p, one of relay-baton's own files, as ReadRegular does,
// refusing a symlink at p.
func ReadOwned(p string, max int64) ([]byte, error) {
	f, err := OpenOwned(p)
	if err != nil {
		return nil, err
	}
	return readCapped(f, p, max)
}

func readCapped(f *os.File, p string, max int64) ([]byte, error) {
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes, %w: relay-baton reads at most that much there (move it aside)", p, max, ErrTooBig)
	}
	return b, nil
}

// ReadDirNames lists folder p's names, in directory order (unsorted, as
// Readdirnames), without blocking when p is a FIFO (os.Open on one would):
// anything but a folder (or a symlink to one) is an error wrapping
// ErrNotRegular.
func ReadDirNames(p string) ([]string, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|ONonBlock|ODirectory, 0)
	if err != nil {
		if fi, lerr := os.Stat(p); lerr == nil && !fi.IsDir() {
			return nil, fmt.Errorf("%s is %s, not a folder, %w: move it aside", p, FileKind(fi.Mode()), ErrNotRegular)
		}
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is %s, not a folder, %w: move it aside", p, FileKind(fi.Mode()), ErrNotRegular)
	}
	return f.Readdirnames(-1)
}

// ErrLinked is wrapped by NoLinkBelow's error.
var ErrLinked = errors.New("relay-baton follows no link in its own folders (a cloned repository could plant one to make it read or write a file elsewhere): remove the link")

// NoLinkBelow returns an error wrapping ErrLinked when p, or a folder
// between root and p, is a symlink: relay-baton's own files under a
// repository (.ai-session/conversation.jsonl) are never read or written
// through one. A part that does not exist yet ends the check (nil).
func NoLinkBelow(root, p string) error {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside %s", p, root)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(cur)
			return fmt.Errorf("%s is a symlink (to %s): %w", cur, to, ErrLinked)
		}
	}
	return nil
}

// FileKind names a file type for an error message ("a named pipe (FIFO)",
// "a symbolic link", ...): the one such helper.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// OpenAppend opens p for appending (created 0600; an older file's mode is
// narrowed to 0600), refusing a symlink and anything but a regular file,
// without blocking on a FIFO.
func OpenAppend(p string) (*os.File, error) {
	f, err := OpenChecked(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600, true)
	if err == nil {
		_ = f.Chmod(0o600)
	}
	return f, err
}

// WriteFile writes data to p (created 0600, truncated), refusing a symlink
// and anything but a regular file at p.
func WriteFile(p string, data []byte) error {
	f, err := OpenChecked(p, os.O_CREATE|os.O_WRONLY, 0o600, true)
	if err != nil {
		return err
	}
	_ = f.Chmod(0o600)
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
