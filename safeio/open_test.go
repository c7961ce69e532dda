package safeio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/safeio"
)

// within runs f and fails the test when it has not returned after a
// generous bound (a blocked open(2) never returns).
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("%s blocked", what)
		return nil
	}
}

func TestRegularFileHelpers(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "file")
	os.WriteFile(reg, []byte("hello\n"), 0o600)
	fifo := filepath.Join(dir, "fifo")
	testkit.MakeFIFO(t, fifo)
	linkReg := filepath.Join(dir, "link-to-file")
	os.Symlink(reg, linkReg)
	linkFIFO := filepath.Join(dir, "link-to-fifo")
	os.Symlink(fifo, linkFIFO)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	missing := filepath.Join(dir, "missing")
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(missing, dangling)

	type read func(string, int64) ([]byte, error)
	cases := []struct {
		name  string
		read  read
		path  string
		want  string // the content, or
		isErr error  // the error it wraps
		text  string // and a part of its message
	}{
		{"regular", safeio.ReadRegular, reg, "hello\n", nil, ""},
		{"FIFO", safeio.ReadRegular, fifo, "", safeio.ErrNotRegular, "is a named pipe (FIFO), not a regular file: move it aside"},
		{"link to a file", safeio.ReadRegular, linkReg, "hello\n", nil, ""},
		{"link to a FIFO", safeio.ReadRegular, linkFIFO, "", safeio.ErrNotRegular, "a named pipe (FIFO)"},
		{"folder", safeio.ReadRegular, sub, "", safeio.ErrNotRegular, "is a directory"},
		{"missing", safeio.ReadRegular, missing, "", fs.ErrNotExist, ""},
		{"dangling link", safeio.ReadRegular, dangling, "", fs.ErrNotExist, ""},
		{"owned regular", safeio.ReadOwned, reg, "hello\n", nil, ""},
		{"owned FIFO", safeio.ReadOwned, fifo, "", safeio.ErrNotRegular, "a named pipe (FIFO)"},
		{"owned link to a file", safeio.ReadOwned, linkReg, "", safeio.ErrNotRegular, "is a symbolic link, not a regular file"},
		{"owned link to a FIFO", safeio.ReadOwned, linkFIFO, "", safeio.ErrNotRegular, "is a symbolic link"},
		{"owned dangling link", safeio.ReadOwned, dangling, "", safeio.ErrNotRegular, "is a symbolic link"},
		{"owned missing", safeio.ReadOwned, missing, "", fs.ErrNotExist, ""},
	}
	for _, c := range cases {
		var got []byte
		err := within(t, c.name, func() (err error) { got, err = c.read(c.path, 1<<20); return err })
		if c.isErr == nil {
			if err != nil || string(got) != c.want {
				t.Errorf("%s: %q %v", c.name, got, err)
			}
			continue
		}
		if !errors.Is(err, c.isErr) || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: err = %v, want %v with %q and the path", c.name, err, c.isErr, c.text)
		}
	}
	// The cap.
	if _, err := safeio.ReadRegular(reg, 5); !errors.Is(err, safeio.ErrTooBig) || !strings.Contains(err.Error(), "over 5 bytes") {
		t.Errorf("cap: %v", err)
	}
	if b, err := safeio.ReadOwned(reg, 6); err != nil || len(b) != 6 {
		t.Errorf("exactly the cap: %q %v", b, err)
	}
	// Writing: a FIFO with no reader and a symlink are refused at once.
	for _, p := range []string{fifo, linkReg} {
		err := within(t, "write "+p, func() error {
			f, err := safeio.OpenChecked(p, os.O_WRONLY|os.O_CREATE, 0o600, true)
			if err == nil {
				f.Close()
			}
			return err
		})
		if !errors.Is(err, safeio.ErrNotRegular) {
			t.Errorf("write %s: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(reg); string(b) != "hello\n" {
		t.Errorf("written through the link: %q", b)
	}
	// Folders.
	os.WriteFile(filepath.Join(sub, "b"), nil, 0o600)
	os.WriteFile(filepath.Join(sub, "a"), nil, 0o600)
	names, err := safeio.ReadDirNames(sub)
	slices.Sort(names)
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Errorf("ReadDirNames: %v %v", names, err)
	}
	for _, p := range []string{fifo, reg} {
		err := within(t, "list "+p, func() error { _, err := safeio.ReadDirNames(p); return err })
		if !errors.Is(err, safeio.ErrNotRegular) || !strings.Contains(err.Error(), "not a folder") {
			t.Errorf("list %s: %v", p, err)
		}
	}
	if _, err := safeio.ReadDirNames(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("list missing: %v", err)
	}
}

// BenchmarkReadDirNames: the FIFO-safe listing against the plain
// os.Open+Readdirnames it replaced in the claim path (every hook lists
// claims/ and inbox/, usually empty or nearly).
func BenchmarkReadDirNames(b *testing.B) {
	for _, n := range []int{0, 100} {
		dir := b.TempDir()
		for i := range n {
			os.WriteFile(filepath.Join(dir, strings.Repeat("x", 20)+string(rune('a'+i%26))+strings.Repeat("0", i/26)+".json"), nil, 0o600)
		}
		b.Run("safe/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := safeio.ReadDirNames(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("plain/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				f, err := os.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Readdirnames(-1); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
