package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv makes the test binary an appender process (see TestMain):
// "path|writer|count".
const childEnv = "RELAY_BATON_TEST_APPEND_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		crashChild(spec) // appends until killed
		os.Exit(1)
	}
	if spec := os.Getenv(childEnv); spec != "" {
		if err := appendChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// appendChild appends count events from writer to path, from two goroutines
// sharing one Log, with texts of varying size so that interleaving would show.
func appendChild(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return err
	}
	l, err := OpenLog(parts[0])
	if err != nil {
		return err
	}
	defer l.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 2 {
				e := New("s-"+parts[1], RoleCodex, KindExecute, parts[1]+"#"+strconv.Itoa(i)+" "+strings.Repeat("x", 100+(i*37)%4000))
				if err := l.Append(e); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func TestAppendFromSeveralProcesses(t *testing.T) {
	const procs, each = 4, 400
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|w%d|%d", childEnv, path, p, each))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() && stderr.Len() > 0 {
				t.Logf("child stderr: %s", stderr.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("appender process: %v", err)
		}
	}

	seen := map[string]bool{}
	st, err := ReadFile(path, func(e Event) error {
		who, rest, _ := strings.Cut(e.Text, " ")
		if rest == "" || strings.Trim(rest, "x") != "" {
			t.Errorf("event text damaged: %.60q", e.Text)
		}
		if seen[who] {
			t.Errorf("event %s seen twice", who)
		}
		seen[who] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != procs*each || st.Skipped() != 0 || st.Lines != procs*each {
		t.Fatalf("stats = %+v, want %d events and nothing skipped", st, procs*each)
	}
	for p := range procs {
		for i := range each {
			if k := fmt.Sprintf("w%d#%d", p, i); !seen[k] {
				t.Errorf("missing %s", k)
			}
		}
	}
	// Every line is whole: exactly procs*each newline-terminated lines.
	b, _ := os.ReadFile(path)
	if got := bytes.Count(b, []byte("\n")); got != procs*each || b[len(b)-1] != '\n' {
		t.Errorf("file has %d newlines, want %d", got, procs*each)
	}
}

func writeEvents(t *testing.T, path string, texts ...string) {
	t.Helper()
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, s := range texts {
		if err := l.Append(New("s1", RoleUser, KindMessage, s)); err != nil {
			t.Fatal(err)
		}
	}
}

func texts(t *testing.T, path string) ([]string, Stats) {
	t.Helper()
	var out []string
	st, err := ReadFile(path, func(e Event) error { out = append(out, e.Text); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

func TestTornLastLineDoesNotGlue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	writeEvents(t, path, "one", "two", "three")
	b, _ := os.ReadFile(path)
	// Cut the third line in half, as a crash mid-write would leave it.
	third := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	if err := os.Truncate(path, int64(third+20)); err != nil {
		t.Fatal(err)
	}
	// Readers skip the torn line.
	got, st := texts(t, path)
	if strings.Join(got, ",") != "one,two" || st.Malformed != 1 || st.FirstSkipped != 3 {
		t.Fatalf("after truncation: %q %+v", got, st)
	}
	writeEvents(t, path, "four")
	got, st = texts(t, path)
	if strings.Join(got, ",") != "one,two,four" {
		t.Fatalf("after append: %q", got)
	}
	if st.Malformed != 1 || st.FirstSkipped != 3 || st.Events != 3 {
		t.Fatalf("stats = %+v, want the torn line 3 reported", st)
	}
}

func TestOpenLogModeAndCap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conversation.jsonl")
	writeEvents(t, path, "hi")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Append(New("s1", RoleCodex, KindExecute, strings.Repeat("y", MaxLineBytes)))
	if err == nil || !strings.Contains(err.Error(), "refs") {
		t.Errorf("oversized append: err = %v, want a line-cap error that points to refs", err)
	}
	if err := l.Append(Event{Role: RoleUser}); err == nil {
		t.Error("an event without a kind was accepted")
	}
	// Bookkeeping fields are filled in.
	if err := l.Append(Event{Role: RoleUser, Kind: KindMessage, Text: "filled"}); err != nil {
		t.Fatal(err)
	}
	got, st := texts(t, path)
	if strings.Join(got, ",") != "hi,filled" || st.Skipped() != 0 {
		t.Errorf("got %q %+v", got, st)
	}
	if _, err := OpenLog(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("OpenLog(dir) err = %v, want a directory error", err)
	}
}

func TestReadFileBadInputs(t *testing.T) {
	dir := t.TempDir()
	good := `{"schemaVersion":1,"id":"evt_a","ts":"2026-05-29T10:00:00.000Z","sessionId":"s","role":"user","kind":"message","text":"ok"}`

	t.Run("missing", func(t *testing.T) {
		_, err := ReadFile(filepath.Join(dir, "nope.jsonl"), func(Event) error { return nil })
		if !errors.Is(err, ErrNoLog) || !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "nothing recorded") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, err := ReadFile(dir, func(Event) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any file")
		}
		p := filepath.Join(dir, "locked.jsonl")
		os.WriteFile(p, []byte(good+"\n"), 0o000)
		_, err := ReadFile(p, func(Event) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("err = %v", err)
		}
	})
	cases := []struct {
		name      string
		content   string
		events    int
		malformed int
		tooLong   int
	}{
		{"empty", "", 0, 0, 0},
		{"blank lines", "\n\n  \n", 0, 0, 0},
		{"invalid utf-8", good + "\n" + strings.Replace(good, "ok", "o\xffk", 1) + "\n", 1, 1, 0},
		{"json but not an event", `{"hello":"world"}` + "\n[1,2]\n\"s\"\n" + good + "\n", 1, 3, 0},
		{"bad ts", strings.Replace(good, "2026-05-29T10:00:00.000Z", "yesterday", 1) + "\n", 0, 1, 0},
		{"no final newline", good + "\n" + good, 2, 0, 0},
		{"crlf", good + "\r\n" + good + "\r\n", 2, 0, 0},
		{"10 MB line", good + "\n" + `{"text":"` + strings.Repeat("z", 10<<20) + `"}` + "\n" + good + "\n", 2, 0, 1},
		{"10 MB last line without newline", good + "\n" + strings.Repeat("z", 10<<20), 1, 0, 1},
		{"line just under the read cap", good + "\n" + strings.Repeat(" ", MaxReadLineBytes-len(good)) + good + "\n", 2, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
			if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			n := 0
			st, err := ReadFile(p, func(e Event) error {
				n++
				if e.Text != "ok" {
					t.Errorf("text = %q", e.Text)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != c.events || st.Events != c.events || st.Malformed != c.malformed || st.TooLong != c.tooLong {
				t.Fatalf("delivered %d, stats %+v; want %d events, %d malformed, %d too long", n, st, c.events, c.malformed, c.tooLong)
			}
		})
	}
}

// A 10 MB line is skipped without being held whole.
func TestHugeLineIsNotBuffered(t *testing.T) {
	good := `{"schemaVersion":1,"id":"evt_a","ts":"2026-05-29T10:00:00.000Z","sessionId":"s","role":"user","kind":"message","text":"ok"}`
	p := filepath.Join(t.TempDir(), "big.jsonl")
	huge := strings.Repeat("z", 10<<20)
	os.WriteFile(p, []byte(good+"\n"+huge+"\n"+good+"\n"), 0o600)
	huge = ""
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, err := ReadFile(p, func(Event) error { return nil })
	runtime.ReadMemStats(&after)
	if err != nil || st.Events != 2 || st.TooLong != 1 {
		t.Fatalf("stats %+v err %v", st, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 6<<20 { // the 1 MiB read cap plus buffer growth, far below the line's 10 MB
		t.Errorf("reading allocated %d bytes; a 10 MB line must not be buffered whole", alloc)
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	writeEvents(t, path, "a", "b", "c")
	stop := errors.New("stop")
	n := 0
	_, err := ReadFile(path, func(Event) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("err %v after %d events", err, n)
	}
}

func TestFollow(t *testing.T) {
	old := FollowPoll
	FollowPoll = 20 * time.Millisecond
	t.Cleanup(func() { FollowPoll = old })

	dir := t.TempDir()
	path := filepath.Join(dir, ".ai-session", "conversation.jsonl") // nor does its folder, yet
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 100)
	done := make(chan error, 1)
	var st Stats
	go func() {
		var err error
		st, err = Follow(ctx, path, 0, func(e Event) error { got <- e.Text; return nil })
		done <- err
	}()
	want := func(texts ...string) {
		t.Helper()
		for _, w := range texts {
			select {
			case g := <-got:
				if g != w {
					t.Fatalf("followed %q, want %q", g, w)
				}
			case <-time.After(time.Minute):
				t.Fatalf("timed out waiting for %q", w)
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, path, "created")
	want("created")
	writeEvents(t, path, "a", "b")
	want("a", "b")

	// A half-written line is not delivered until it is complete.
	line := AppendJSON(nil, New("s1", RoleUser, KindMessage, "slow"))
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(line[:10])
	f.Sync()
	time.Sleep(100 * time.Millisecond)
	select {
	case g := <-got:
		t.Fatalf("partial line delivered as %q", g)
	default:
	}
	f.Write(append(line[10:], '\n'))
	f.Close()
	want("slow")

	// Truncation: start again from the top.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	writeEvents(t, path, "after truncate")
	want("after truncate")

	// Replacement by rename (a new inode).
	tmp := filepath.Join(dir, "new.jsonl")
	writeEvents(t, tmp, "replaced", "and more")
	os.Rename(tmp, path)
	want("replaced", "and more")

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Follow returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Follow did not stop on cancel")
	}
	if st.Events != 7 || st.Skipped() != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFollowNeedsFolder(t *testing.T) {
	_, err := Follow(context.Background(), filepath.Join(t.TempDir(), "no", "such", "c.jsonl"), 0, func(Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v", err)
	}
}

// The batch-parallel file reader delivers exactly what the sequential Scan
// does, in order, across batch boundaries, long lines and bad lines.
func TestReadFileMatchesScan(t *testing.T) {
	var buf bytes.Buffer
	for i := range 7000 {
		switch {
		case i%997 == 0:
			buf.WriteString(strings.Repeat("q", MaxReadLineBytes+10) + "\n") // too long
		case i%331 == 0:
			e := New("s", RoleUser, KindMessage, strings.Repeat("L", 100<<10)) // over the 64 KiB buffer
			buf.Write(AppendJSON(nil, e))
			buf.WriteByte('\n')
		case i%101 == 0:
			buf.WriteString("{broken\n")
		case i%53 == 0:
			buf.WriteString("\n")
		default:
			e := New("s", RoleCodex, KindExecute, "n"+strconv.Itoa(i))
			buf.Write(AppendJSON(nil, e))
			buf.WriteByte('\n')
		}
	}
	buf.WriteString(`{"partial":`) // unterminated last line
	path := filepath.Join(t.TempDir(), "c.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o600)

	var seq, par []string
	st1, err1 := Scan(bytes.NewReader(buf.Bytes()), func(e Event) error { seq = append(seq, e.ID+e.Text[:min(5, len(e.Text))]); return nil })
	st2, err2 := ReadFile(path, func(e Event) error { par = append(par, e.ID+e.Text[:min(5, len(e.Text))]); return nil })
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if st1 != st2 {
		t.Errorf("stats differ: Scan %+v, ReadFile %+v", st1, st2)
	}
	if strings.Join(seq, "\n") != strings.Join(par, "\n") || len(seq) < 6000 {
		t.Errorf("events differ: %d vs %d", len(seq), len(par))
	}
	if st2.TooLong != 8 || st2.FirstSkipped != 1 {
		t.Errorf("stats %+v", st2)
	}
	// completeOnly leaves the unterminated line for later.
	_, end, err := ReadFileFrom(path, 0, true, func(Event) error { return nil })
	if err != nil || end != int64(bytes.LastIndexByte(buf.Bytes(), '\n')+1) {
		t.Errorf("end %d, err %v", end, err)
	}
}
