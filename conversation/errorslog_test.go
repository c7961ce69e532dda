package conversation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
)

// The same failure many times over (a TUI that exits made 222 in 50 ms)
// is one line of errors.log with its count; distinct failures keep a line
// each; the file stays under chatlog.MaxErrorsLog however many there are.
func TestErrorsLogOneLinePerFailure(t *testing.T) {
	s := newSession(t)
	path := filepath.Join(s.Dir(), "errors.log")
	var wg sync.WaitGroup
	for i := range 222 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.RecordError(errors.New("codex queue for thread x: exit 1: thread not loaded"))
			if i%100 == 0 {
				s.RecordError(fmt.Errorf("another failure %d", i))
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4 (one per distinct failure):\n%s", len(lines), b)
	}
	var same string
	for _, l := range lines {
		if strings.Contains(l, "thread not loaded") {
			same = l
		}
	}
	if !strings.Contains(same, " ×222 (last ") || strings.Count(string(b), "thread not loaded") != 1 {
		t.Fatalf("the repeated failure's line: %q\n%s", same, b)
	}
	// Once more: its line counts on and moves to the end.
	s.RecordError(errors.New("codex queue for thread x: exit 1: thread not loaded"))
	b, _ = os.ReadFile(path)
	lines = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if last := lines[len(lines)-1]; len(lines) != 4 || !strings.Contains(last, " ×223 (last ") || !strings.HasSuffix(last, "thread not loaded") {
		t.Fatalf("after one more:\n%s", b)
	}

	// Bounded: thousands of distinct failures keep the newest, under the bound.
	for i := range 1200 {
		s.RecordError(fmt.Errorf("distinct failure number %05d %s", i, strings.Repeat("x", 60)))
	}
	b, _ = os.ReadFile(path)
	if len(b) > chatlog.MaxErrorsLog || !strings.Contains(string(b), "distinct failure number 01199") || strings.Contains(string(b), "distinct failure number 00000") {
		t.Fatalf("errors.log is %d bytes (bound %d); newest kept: %v", len(b), chatlog.MaxErrorsLog, strings.Contains(string(b), "number 01199"))
	}
	// A message over several lines stays on one.
	s.RecordError(errors.New("first line\nsecond line"))
	if b, _ = os.ReadFile(path); !strings.HasSuffix(string(b), " first line second line\n") {
		t.Fatalf("a multi-line message: %q", b[len(b)-60:])
	}
}

// errors.log is never written through a link.
func TestErrorsLogRefusesALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	s := newSession(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	if err := os.Symlink(target, filepath.Join(s.Dir(), "errors.log")); err != nil {
		t.Fatal(err)
	}
	s.RecordError(errors.New("boom"))
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Fatalf("written through the link: %q", b)
	}
}
