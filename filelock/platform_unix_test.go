//go:build unix

package filelock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// renameLink, the no-replace rename of the BSDs and of -tags portable,
// never replaces, finishes a move a crash left half done, and moves a
// symlink as the link it is.
func TestRenameLink(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("A"), 0o600)
	os.WriteFile(b, []byte("B"), 0o600)
	if err := renameLink(a, b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("over an existing file: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "B" {
		t.Fatalf("b replaced: %q", got)
	}
	os.Remove(b)
	if err := renameLink(a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a still there: %v", err)
	}
	// A crash between link and unlink: both names, one file. The next
	// rename finishes the move and reports the source gone, as a rename
	// that lost a race does.
	os.Link(b, a)
	if err := renameLink(a, filepath.Join(dir, "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("half-done move: %v", err)
	}
	if _, err := os.Lstat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("half-done move left a: %v", err)
	}
	// A symlink moves as a link, never as its target's content.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("S"), 0o600)
	l, m := filepath.Join(dir, "l"), filepath.Join(dir, "m")
	os.Symlink(secret, l)
	if err := renameLink(l, m); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(m); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("moved link: %v %v", fi, err)
	}
	if err := renameLink(filepath.Join(dir, "none"), filepath.Join(dir, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing source: %v", err)
	}
}

// RenameNoReplace, whichever way this build takes, never replaces.
func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("A"), 0o600)
	os.WriteFile(b, []byte("B"), 0o600)
	if err := RenameNoReplace(a, b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("over an existing file: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "B" {
		t.Fatalf("b replaced: %q", got)
	}
}

// Held (the Codex writer-lock probe off Linux /proc) sees another
// open file's exclusive flock, and takes nothing it keeps.
func TestLockHeld(t *testing.T) {
	p := filepath.Join(t.TempDir(), "thread.lock")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := Held(p); held || err != nil {
		t.Fatalf("unlocked file: %v %v", held, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("the probe kept a lock: %v", err)
	}
	if held, err := Held(p); !held || err != nil {
		t.Fatalf("locked file: %v %v", held, err)
	}
	f.Close()
	if held, _ := Held(p); held {
		t.Fatal("a released lock still reads as held")
	}
}
