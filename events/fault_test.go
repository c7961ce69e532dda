package events

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A full disk, injected (no mount needed): the append fails with an error
// that says the disk is full and what to do, and the events before it stay
// readable.
func TestAppendDiskFull(t *testing.T) {
	p := filepath.Join(t.TempDir(), "conversation.jsonl")
	l, err := OpenLog(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(New("s", RoleUser, KindMessage, "before")); err != nil {
		t.Fatal(err)
	}
	for _, fault := range []error{syscall.ENOSPC, syscall.EDQUOT} {
		l.writeFault = func(f *os.File, b []byte) (int, error) {
			return 0, &os.PathError{Op: "write", Path: f.Name(), Err: fault}
		}
		err = l.Append(New("s", RoleUser, KindMessage, "lost"))
		if !errors.Is(err, fault) || !strings.Contains(err.Error(), "the disk is full: free some space") {
			t.Errorf("append on a full disk (%v): %v", fault, err)
		}
	}
	// A short write (the disk filled mid-line) leaves a torn line; the next
	// append after space is freed starts on a line of its own.
	l.writeFault = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	if err := l.Append(New("s", RoleUser, KindMessage, "torn")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("short write: %v", err)
	}
	l.writeFault = nil
	if err := l.Append(New("s", RoleUser, KindMessage, "after")); err != nil {
		t.Fatal(err)
	}
	var texts []string
	st, err := ReadFile(p, func(e Event) error { texts = append(texts, e.Text); return nil })
	if err != nil || strings.Join(texts, ",") != "before,after" || st.Malformed != 1 {
		t.Errorf("after a full disk: %v %+v %v", texts, st, err)
	}
}
