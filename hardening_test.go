package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// The tests of issue 14 (hostile pages, hostile repositories, a crash in
// the middle of a claim), in the bad-input style: a clear message, nothing
// lost, no hang.

func evPayload(cwd, event, extra string) string {
	return `{"session_id":"` + chatSID + `","cwd":"` + cwd + `","hook_event_name":"` + event + `"` + extra + `}`
}

func errorsLog(s *conversation.Session) string {
	b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log"))
	return string(b)
}

// TestHookObeysEvent: each hook subcommand serves its own event only. A
// payload of another event (or none) claims nothing, prints nothing, and is
// recorded in errors.log.
func TestHookObeysEvent(t *testing.T) {
	ws, s := chatWorkspace(t)
	m, err := s.Enqueue("room", "for the right hook only")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cases := []struct {
		sub, event string
	}{
		{"stop", "UserPromptSubmit"},
		{"stop", "SessionStart"},
		{"stop", ""},
		{"wait", "UserPromptSubmit"},
		{"wait", "PreToolUse"},
		{"prompt-submit", "Stop"},
		{"session-start", "Stop"},
	}
	for _, c := range cases {
		os.Remove(filepath.Join(s.Dir(), "errors.log"))
		in := evPayload(ws, c.event, "")
		if c.event == "" {
			in = `{"session_id":"` + chatSID + `","cwd":"` + ws + `"}`
		}
		args := []string{"hook", c.sub}
		if c.sub == "wait" {
			args = append(args, "--timeout", "2s")
		}
		start := time.Now()
		out, errOut, code := relayBaton(t, ctx, nil, in, args...)
		if out != "" || errOut != "" || code != 0 {
			t.Errorf("hook %s given %q: stdout %q stderr %q exit %d; want silence", c.sub, c.event, out, errOut, code)
		}
		if time.Since(start) > 1500*time.Millisecond {
			t.Errorf("hook %s given %q took %v: it went on to wait", c.sub, c.event, time.Since(start))
		}
		if st, err := s.State(m.ID); err != nil || !st.Queued {
			t.Fatalf("hook %s given a %q payload touched the message: %+v %v", c.sub, c.event, st, err)
		}
		log := errorsLog(s)
		for _, want := range []string{"hook " + c.sub + ": payload has", "ignored, nothing claimed", "hook install"} {
			if !strings.Contains(log, want) {
				t.Errorf("hook %s given %q: errors.log %q does not say %q", c.sub, c.event, log, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "session.json")); err == nil {
		t.Error("session-start given a Stop payload registered the session")
	}
	if s.Busy(time.Now()) {
		t.Error("prompt-submit given a Stop payload marked the session busy")
	}
	// The right event still delivers.
	out, _, _ := relayBaton(t, ctx, nil, evPayload(ws, "Stop", ""), "hook", "stop")
	if !strings.Contains(out, m.ID) {
		t.Fatalf("hook stop given a Stop payload: %q", out)
	}
}

// TestHookSubdirCwd: without CLAUDE_PROJECT_DIR, every hook called with a
// sub-folder as cwd resolves the same workspace (the folder holding the
// session's chat folder), not a second chat folder in the sub-folder.
func TestHookSubdirCwd(t *testing.T) {
	ws, s := chatWorkspace(t)
	os.Mkdir(filepath.Join(ws, ".git"), 0o700)
	sub := filepath.Join(ws, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, e, c := relayBaton(t, ctx, nil, evPayload(sub, "UserPromptSubmit", ""), "hook", "prompt-submit"); c != 0 || e != "" {
		t.Fatalf("prompt-submit: %q %d", e, c)
	}
	if !s.Busy(time.Now()) {
		t.Error("prompt-submit from a sub-folder did not mark the session busy at the root")
	}
	m, _ := s.Enqueue("room", "queued at the root")
	out, _, _ := relayBaton(t, ctx, nil, evPayload(sub, "Stop", ""), "hook", "stop")
	if !strings.Contains(out, m.ID) {
		t.Fatalf("stop from a sub-folder did not see the message queued at the root: %q", out)
	}
	m2, _ := s.Enqueue("room", "for the waiter")
	s.ClearBusy()
	_, errOut, code := relayBaton(t, ctx, nil, evPayload(sub, "Stop", ""), "hook", "wait", "--timeout", "5s")
	if code != 2 || !strings.Contains(errOut, m2.ID) {
		t.Fatalf("wait from a sub-folder: exit %d, %q", code, errOut)
	}
	if _, _, c := relayBaton(t, ctx, nil, evPayload(sub, "SessionStart", `,"source":"startup"`), "hook", "session-start"); c != 0 {
		t.Fatalf("session-start exit %d", c)
	}
	if r, ok := s.Registration(); !ok || r.Cwd != sub {
		t.Errorf("session-start from a sub-folder: registration %+v %v at the root", r, ok)
	}
	for _, d := range []string{filepath.Join(ws, "pkg"), sub} {
		if _, err := os.Stat(filepath.Join(d, ".claude")); err == nil {
			t.Errorf("a second .claude folder was created in %s", d)
		}
	}
	// A new session whose first hook runs in a sub-folder of a git
	// repository gets its chat folder at the repository root.
	ws2 := t.TempDir()
	os.Mkdir(filepath.Join(ws2, ".git"), 0o700)
	sub2 := filepath.Join(ws2, "a", "b")
	os.MkdirAll(sub2, 0o700)
	relayBaton(t, ctx, nil, `{"session_id":"`+chatSID+`","cwd":"`+sub2+`","hook_event_name":"SessionStart","source":"startup"}`, "hook", "session-start")
	if _, err := os.Stat(filepath.Join(ws2, conversation.ChatDir, chatSID, "inbox")); err != nil {
		t.Errorf("first hook in a sub-folder: no chat folder at the repository root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub2, ".claude")); err == nil {
		t.Error("first hook in a sub-folder created .claude there")
	}
}

// rbProc is a relay-baton process started by a test.
type rbProc struct {
	cmd           *exec.Cmd
	out, err      *lockedBuffer
	done          chan struct{}
	code          int
	startedAt     time.Time
	finishedAfter time.Duration
}

func startRB(t *testing.T, env []string, stdin io.Reader, args ...string) *rbProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "RELAY_BATON_TEST_AS_MAIN=1", "CLAUDE_PROJECT_DIR="), env...)
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	cmd.Stdin = stdin
	p := &rbProc{cmd: cmd, out: &lockedBuffer{}, err: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.err
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.startedAt = time.Now()
	go func() {
		err := cmd.Wait()
		p.finishedAfter = time.Since(p.startedAt)
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits up to limit for the process to end; false (and a kill) when
// it hung.
func (p *rbProc) wait(limit time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		return false
	}
}

// term sends SIGTERM and reports whether the process ended within a second.
func (p *rbProc) term() bool {
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(time.Second)
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFIFOsDoNotHang: a FIFO where relay-baton expects a file (an inbox
// message, errors.log, log.jsonl, wait.lock, the transcript,
// conversation.jsonl) never makes a command block: it is refused or moved
// aside with a message, the real messages are still delivered, and a
// signal ends the following commands within a second.
func TestFIFOsDoNotHang(t *testing.T) {
	const limit = 5 * time.Second
	fifoInbox := func(t *testing.T, s *conversation.Session) conversation.Message {
		mkfifo(t, filepath.Join(s.InboxDir(), "0000000000001-f1f0f1f0.json"))
		m, err := s.Enqueue("room", "behind the fifo")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	checkFIFOAside := func(t *testing.T, s *conversation.Session) {
		t.Helper()
		if _, err := os.Lstat(s.DeliveredPath("f1f0f1f0")); err == nil {
			t.Error("the FIFO was renamed into delivered/")
		}
		ents, _ := os.ReadDir(s.RejectedDir())
		if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), "f1f0f1f0.json") {
			t.Errorf("rejected/ holds %v, want the FIFO", ents)
		}
		if log := errorsLog(s); !strings.Contains(log, "named pipe (FIFO)") {
			t.Errorf("errors.log %q does not name the FIFO", log)
		}
	}
	t.Run("inbox message, hook stop", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		m := fifoInbox(t, s)
		p := startRB(t, nil, strings.NewReader(evPayload(ws, "Stop", "")), "hook", "stop")
		if !p.wait(limit) {
			t.Fatal("hook stop hung on a FIFO in the inbox")
		}
		if p.code != 0 || !strings.Contains(p.out.String(), m.ID) {
			t.Fatalf("exit %d, stdout %q: the message behind the FIFO was not delivered", p.code, p.out.String())
		}
		checkFIFOAside(t, s)
	})
	t.Run("inbox message, hook wait", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		m := fifoInbox(t, s)
		p := startRB(t, nil, strings.NewReader(evPayload(ws, "Stop", "")), "hook", "wait", "--timeout", "10s")
		if !p.wait(limit) {
			t.Fatal("hook wait hung on a FIFO in the inbox")
		}
		if p.code != 2 || !strings.Contains(p.err.String(), m.ID) {
			t.Fatalf("exit %d, stderr %q", p.code, p.err.String())
		}
		if s.Waiting() {
			t.Error("wait.lock still held: the session looks armed while nothing waits")
		}
		checkFIFOAside(t, s)
	})
	t.Run("inbox message, wait (Monitor)", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		m := fifoInbox(t, s)
		p := startRB(t, nil, nil, "wait", "--session", chatSID, "--workspace", ws, "--once")
		if !p.wait(limit) {
			t.Fatal("wait hung on a FIFO in the inbox")
		}
		if p.code != 0 || !strings.Contains(p.out.String(), m.ID) || !strings.Contains(p.err.String(), "named pipe (FIFO)") {
			t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.out.String(), p.err.String())
		}
		checkFIFOAside(t, s)
	})
	t.Run("wait.lock, hook wait", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		mkfifo(t, filepath.Join(s.Dir(), "wait.lock"))
		m, _ := s.Enqueue("room", "stays queued")
		p := startRB(t, nil, strings.NewReader(evPayload(ws, "Stop", "")), "hook", "wait", "--timeout", "10s")
		if !p.wait(limit) {
			t.Fatal("hook wait hung on a FIFO at wait.lock")
		}
		if p.code != 0 || p.err.String() != "" {
			t.Errorf("exit %d, stderr %q", p.code, p.err.String())
		}
		if log := errorsLog(s); !strings.Contains(log, "wait.lock is a named pipe (FIFO)") || !strings.Contains(log, "move it aside") {
			t.Errorf("errors.log %q", log)
		}
		if st, _ := s.State(m.ID); !st.Queued {
			t.Errorf("message %+v, want still queued", st)
		}
	})
	t.Run("errors.log, hook stop", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		mkfifo(t, filepath.Join(s.Dir(), "errors.log"))
		os.WriteFile(filepath.Join(s.InboxDir(), "0000000000001-junk0001.json"), []byte("not json"), 0o600)
		m, _ := s.Enqueue("room", "after the junk")
		p := startRB(t, nil, strings.NewReader(evPayload(ws, "Stop", "")), "hook", "stop")
		if !p.wait(limit) {
			t.Fatal("hook stop hung writing to a FIFO at errors.log")
		}
		if !strings.Contains(p.out.String(), m.ID) {
			t.Errorf("stdout %q", p.out.String())
		}
	})
	t.Run("log.jsonl, send", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		mkfifo(t, s.LogPath())
		p := startRB(t, nil, nil, "send", "--session", chatSID, "--workspace", ws, "hello")
		if !p.wait(limit) {
			t.Fatal("send hung appending to a FIFO at log.jsonl")
		}
		if p.code != 0 || !strings.Contains(p.out.String(), "queued ") {
			t.Errorf("exit %d %q %q", p.code, p.out.String(), p.err.String())
		}
		if q, _ := s.Queue(); q.Depth != 1 {
			t.Errorf("queue depth %d, want the message queued", q.Depth)
		}
	})
	t.Run("transcript, tail", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
		mkfifo(t, tr)
		register(t, s, tr)
		p := startRB(t, nil, nil, "tail", "--session", chatSID, "--workspace", ws, "--from-start", "--no-follow")
		if !p.wait(limit) {
			t.Fatal("tail hung on a FIFO transcript")
		}
		if p.code != 1 || !strings.Contains(p.err.String(), "is not a regular file but a named pipe (FIFO)") {
			t.Errorf("exit %d, stderr %q", p.code, p.err.String())
		}
		p = startRB(t, nil, nil, "tail", "--session", chatSID, "--workspace", ws)
		if !p.wait(limit) {
			t.Fatal("tail (following) hung on a FIFO transcript")
		}
		if p.code != 1 {
			t.Errorf("following: exit %d, stderr %q", p.code, p.err.String())
		}
	})
	t.Run("conversation.jsonl, replay", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".git"), 0o700)
		d, _ := conversation.EnsureSessionDir(root)
		mkfifo(t, filepath.Join(d, conversation.LogName))
		for _, args := range [][]string{{"replay", "--path", root}, {"replay", "--path", root, "--follow"}, {"replay", "--file", filepath.Join(d, conversation.LogName)}} {
			p := startRB(t, nil, nil, args...)
			if !p.wait(limit) {
				t.Fatalf("%v hung on a FIFO conversation.jsonl", args)
			}
			if p.code != 1 || !strings.Contains(p.err.String(), "named pipe (FIFO)") {
				t.Errorf("%v: exit %d, stderr %q", args, p.code, p.err.String())
			}
		}
	})
	t.Run("a signal ends the followers", func(t *testing.T) {
		ws, s := chatWorkspace(t)
		tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
		os.WriteFile(tr, nil, 0o600)
		register(t, s, tr)
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".git"), 0o700)
		conversation.EnsureSessionDir(root)
		hold := hangingStdin(t)
		for _, c := range []struct {
			stdin io.Reader
			args  []string
		}{
			{nil, []string{"tail", "--session", chatSID, "--workspace", ws}},
			{nil, []string{"wait", "--session", chatSID, "--workspace", ws}},
			{nil, []string{"replay", "--path", root, "--follow"}},
			{nil, []string{"send", "--session", chatSID, "--workspace", ws, "--follow", "hello"}},
			{hold, []string{"hook", "stop"}},
			{hold, []string{"hook", "wait"}},
		} {
			p := startRB(t, nil, c.stdin, c.args...)
			time.Sleep(300 * time.Millisecond)
			select {
			case <-p.done:
				t.Errorf("%v ended by itself: exit %d %q", c.args, p.code, p.err.String())
				continue
			default:
			}
			if !p.term() {
				t.Errorf("%v did not end within a second of SIGTERM", c.args)
			}
		}
	})
	t.Run("a payload that never ends: the Stop hook stays in its budget", func(t *testing.T) {
		_, s := chatWorkspace(t)
		s.Enqueue("room", "x")
		p := startRB(t, []string{"RELAY_BATON_HOOK_BUDGET=500ms"}, hangingStdin(t), "hook", "stop")
		if !p.wait(3 * time.Second) {
			t.Fatal("hook stop outlived its budget on a payload that never ends")
		}
		if p.code != 0 || p.out.String() != "" {
			t.Errorf("exit %d, stdout %q", p.code, p.out.String())
		}
	})
}

// hangingStdin is a pipe that never ends (its writer stays open until the
// test ends).
func hangingStdin(t *testing.T) io.Reader {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	return r
}

func runWithStdin(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// TestNoWritesThroughSymlinks: a repository can commit links in
// .ai-session/ (or .ai-session itself) pointing at the user's files.
// relay-baton never writes through them: every file it writes is opened
// O_NOFOLLOW and created 0600, and a .ai-session leading out of the
// repository is refused with what to do.
func TestNoWritesThroughSymlinks(t *testing.T) {
	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "bashrc")
	const original = "# the user's file\n"
	reset := func() { os.WriteFile(victim, []byte(original), 0o644) }
	untouched := func(t *testing.T) {
		t.Helper()
		if b, _ := os.ReadFile(victim); string(b) != original {
			t.Fatalf("the link's target was written: %q", b)
		}
		if ents, _ := os.ReadDir(victimDir); len(ents) != 1 {
			t.Fatalf("files created beside the target: %v", ents)
		}
	}
	t.Run("conversation.jsonl, note", func(t *testing.T) {
		reset()
		repo := roomRepo(t)
		d, _ := conversation.EnsureSessionDir(repo)
		os.Symlink(victim, filepath.Join(d, conversation.LogName))
		code, _, errs := runWithStdin(t, "", "note", "--path", repo, "pwned")
		if code == 0 || !strings.Contains(errs, "is a symbolic link, not a regular file") || !strings.Contains(errs, "move it aside") {
			t.Errorf("note through a linked conversation.jsonl: exit %d, %q", code, errs)
		}
		untouched(t)
	})
	t.Run(".ai-session out of the repository, note", func(t *testing.T) {
		reset()
		repo := roomRepo(t)
		os.Symlink(victimDir, filepath.Join(repo, ".ai-session"))
		code, _, errs := runWithStdin(t, "", "note", "--path", repo, "pwned")
		if code == 0 || !strings.Contains(errs, "is a symlink out of the repository") || !strings.Contains(errs, "remove the link") {
			t.Errorf("note with .ai-session linked out: exit %d, %q", code, errs)
		}
		untouched(t)
	})
	t.Run(".ai-session linked inside the repository is fine", func(t *testing.T) {
		repo := roomRepo(t)
		os.Mkdir(filepath.Join(repo, "state"), 0o700)
		os.Symlink("state", filepath.Join(repo, ".ai-session"))
		if code, _, errs := runWithStdin(t, "", "note", "--path", repo, "fine"); code != 0 {
			t.Fatalf("exit %d %q", code, errs)
		}
		if fi, err := os.Stat(filepath.Join(repo, "state", conversation.LogName)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("log in the linked folder: %v %v", fi, err)
		}
	})
	t.Run("room_history, chat", func(t *testing.T) {
		reset()
		repo := roomRepo(t)
		d, _ := conversation.EnsureSessionDir(repo)
		os.Symlink(victim, filepath.Join(d, "room_history"))
		code, out, errs := runWithStdin(t, "/note typed in the room\n/exit\n", "chat", "--path", repo)
		if code != 0 || !strings.Contains(out, "history not saved") || !strings.Contains(out, "symbolic link") {
			t.Errorf("chat with a linked room_history: exit %d\n%s\n%s", code, out, errs)
		}
		untouched(t)
		// Without the link the history is written, 0600, and read back.
		os.Remove(filepath.Join(d, "room_history"))
		runWithStdin(t, "/note first\n/exit\n", "chat", "--path", repo)
		fi, err := os.Lstat(filepath.Join(d, "room_history"))
		if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
			t.Fatalf("room_history: %v %v, want a regular file 0600", fi, err)
		}
		b, _ := os.ReadFile(filepath.Join(d, "room_history"))
		if string(b) != "/note first\n/exit\n" {
			t.Errorf("room_history = %q", b)
		}
	})
	t.Run("prompts folder linked out", func(t *testing.T) {
		reset()
		repo := roomRepo(t)
		d, _ := conversation.EnsureSessionDir(repo)
		os.Symlink(victimDir, filepath.Join(d, "prompts"))
		if _, err := conversation.EnsureSubdir(d, "prompts"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("EnsureSubdir through a link: %v", err)
		}
		untouched(t)
	})
}
