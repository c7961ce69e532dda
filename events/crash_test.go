package events

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv makes the test binary an appender that never stops (see
// TestMain): "path|seed". It reports each event id on stdout once Append
// has returned, so the parent knows what must be in the log.
const crashChildEnv = "RELAY_BATON_TEST_CRASH_CHILD"

func crashChild(spec string) {
	path, seedStr, _ := strings.Cut(spec, "|")
	seed, _ := strconv.ParseUint(seedStr, 10, 64)
	rng := rand.New(rand.NewPCG(seed, 7))
	l, err := OpenLog(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for i := 0; ; i++ {
		size := 20 + rng.IntN(2000)
		if rng.IntN(20) == 0 {
			size = 16<<10 + rng.IntN(40<<10) // now and then a big one: a longer write
		}
		e := New("crash", RoleCodex, KindExecute, strings.Repeat("é", size/2))
		e.ID = NewID()
		if err := l.Append(e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		os.Stdout.WriteString(e.ID + "\n")
	}
}

// TestCrashSafety kills an appending child process with SIGKILL at random
// points, 1,000 times (RELAY_BATON_CRASH_ITERS overrides; -short runs
// 100). After each kill: the log reads; every event the child reported as
// written is in it, once; and the next append lands intact as the last
// event. The log is started afresh every 100 kills to keep reads short;
// each finished log is read whole and its counts must add up.
func TestCrashSafety(t *testing.T) {
	iters := 1000
	if testing.Short() {
		iters = 100
	}
	if v, err := strconv.Atoi(os.Getenv("RELAY_BATON_CRASH_ITERS")); err == nil && v > 0 {
		iters = v
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	var (
		path                                  string
		inFile, markers                       int
		reported, extra, torn, beforeAnything int
	)
	finishLog := func() {
		if path == "" {
			return
		}
		st, err := ReadFile(path, func(Event) error { return nil })
		if err != nil {
			t.Fatalf("read %s whole: %v", path, err)
		}
		if st.Events != inFile {
			t.Fatalf("%s: %d events read whole, %d counted kill by kill", path, st.Events, inFile)
		}
		os.Remove(path)
	}
	start := time.Now()
	for i := range iters {
		if i%100 == 0 {
			finishLog()
			path = filepath.Join(dir, fmt.Sprintf("conversation-%d.jsonl", i/100))
			inFile = 0
		}
		var off int64
		if fi, err := os.Stat(path); err == nil {
			off = fi.Size()
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path+"|"+strconv.FormatUint(seed+uint64(i), 10))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ids := make(chan []string, 1)
		go func() {
			var got []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			io.Copy(io.Discard, out)
			ids <- got
		}()
		// Kill somewhere in the first ~25 ms: during start-up, the open,
		// or any of the appends.
		time.Sleep(time.Duration(rng.IntN(25000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		want := <-ids
		werr := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("kill %d: the child was not killed but ended: %v: %s", i, werr, stderr.String())
		}
		if len(want) == 0 {
			beforeAnything++
		}
		reported += len(want)

		got := map[string]int{}
		st, _, err := ReadFileFrom(path, off, false, func(e Event) error {
			got[e.ID]++
			return nil
		})
		if err != nil && !(len(want) == 0 && (errors.Is(err, ErrNoLog) || errors.Is(err, fs.ErrNotExist))) {
			t.Fatalf("kill %d: the log does not read: %v", i, err)
		}
		torn += st.Malformed + st.TooLong
		for _, id := range want {
			if got[id] != 1 {
				t.Fatalf("kill %d: reported event %s is in the log %d times", i, id, got[id])
			}
		}
		extra += len(got) - len(want) // written, killed before reporting
		inFile += len(got)

		// The next append is intact: it reads back as the last event.
		l, err := OpenLog(path)
		if err != nil {
			t.Fatal(err)
		}
		mark := New("crash", RoleRelayBaton, KindMessage, fmt.Sprintf("after kill %d", i))
		mark.ID = NewID()
		if err := l.Append(mark); err != nil {
			t.Fatalf("kill %d: append after the kill: %v", i, err)
		}
		l.Close()
		markers++
		inFile++
		var last Event
		if _, _, err := ReadFileFrom(path, off, false, func(e Event) error { last = e; return nil }); err != nil {
			t.Fatal(err)
		}
		if last.ID != mark.ID || last.Text != mark.Text {
			t.Fatalf("kill %d: the append after the kill did not read back intact: last event %+v", i, last)
		}
	}
	finishLog()
	t.Logf("%d kills in %v: %d events reported written, all present; %d more written but not yet reported; %d kills before the first append; %d torn lines; %d appends after a kill, all intact",
		iters, time.Since(start).Round(time.Millisecond), reported, extra, beforeAnything, torn, markers)
}
