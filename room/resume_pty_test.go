package room

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// startSized runs the built relay-baton with args in a pty of cols x rows.
func startSized(tb testing.TB, dir string, cols, rows uint16, args []string, env ...string) *proc {
	tb.Helper()
	bin, _ := binaries(tb)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "TERM=xterm"}, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		tb.Fatal(err)
	}
	p := &proc{screen: newScreen(f), cmd: cmd}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return p
}

// untilRE waits for re to match after the last match.
func (s *screen) untilRE(tb testing.TB, re *regexp.Regexp) []string {
	tb.Helper()
	deadline := time.Now().Add(ptyGuard) // a hang guard: it returns on the match
	for time.Now().Before(deadline) {
		s.mu.Lock()
		all := s.buf.String()
		if loc := re.FindStringSubmatchIndex(all[s.mark:]); loc != nil {
			m := re.FindStringSubmatch(all[s.mark:])
			s.mark += loc[1]
			s.mu.Unlock()
			return m
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for /%s/; screen:\n%s", re, s.String())
	return nil
}

// These rooms run --in-place: the fake codex writes FAKE_AGENT_WRITE, a
// path in the user's tree.

// planInRoom starts the room, switches to codex, plans with the fake
// claude and quits.
func planInRoom(t *testing.T, dir string, env []string) {
	t.Helper()
	p := startSized(t, dir, 160, 50, []string{"chat"}, env...)
	p.until(t, "claude› ")
	p.send(t, "/agent codex\r")
	p.until(t, "active agent: codex")
	p.until(t, "codex› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "wrote .ai-session/plan.md")
	p.until(t, "codex› ")
	p.send(t, "\x04")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func TestPTYResumeWidePanel(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	env := []string{"NO_COLOR=1", "RELAY_BATON_CLAUDE=" + fake, "RELAY_BATON_CODEX=" + fake, "FAKE_AGENT_WRITE=" + filepath.Join(dir, "added.txt")}
	planInRoom(t, dir, env)

	p := startSized(t, dir, 160, 50, []string{"chat", "--resume", "--in-place"}, env...)
	p.until(t, "resuming from .ai-session/conversation.jsonl")
	p.until(t, "last 4 turns:")
	p.until(t, "user command: /agent codex")
	p.until(t, "user command: /plan add a flag")
	p.until(t, "relay-baton/claude plan: plan.md written by claude")
	p.until(t, "active agent: codex (restored from the log: active ")
	p.untilRE(t, regexp.MustCompile(`plan: \.ai-session/plan\.md, \d+s old \(written by claude per the log, \d+s ago\); lacks Scope`))
	p.until(t, "last run: claude /plan, exit 0")
	// The prompt for codex, then the boxed panel drawn in its pinned rows.
	p.until(t, "codex› ")
	p.until(t, "┌─ context ─")
	p.until(t, "│ agent    codex (agent room)")
	p.untilRE(t, regexp.MustCompile(`│ plan     \d+s old, gate: lacks Scope \(in\), Out of scope`))
	p.until(t, "changed  0 files")
	p.until(t, "last run claude /plan exit 0")
	p.send(t, "/execute\r")
	p.until(t, "preview: /execute → codex (executor)")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "codex› ")
	p.until(t, "┌─ context ─")
	p.until(t, "changed  1 file")
	p.until(t, "last run codex /execute exit 0")
	// Readline still edits: type, erase a word, complete /resume.
	p.send(t, "hello world\x17\x15/resu\t")
	p.until(t, "/resume ")
	p.send(t, "2\r")
	p.until(t, "last 2 turns:")
	p.until(t, "codex› ")
	p.send(t, "\x04")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if s := p.String(); strings.Contains(s, "\x1b[3") || strings.Contains(s, "\x1b[1m") {
		t.Fatalf("colour codes with NO_COLOR:\n%q", s)
	}
}

func TestPTYResumeNarrowStatusLine(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	env := []string{"NO_COLOR=1", "RELAY_BATON_CLAUDE=" + fake, "RELAY_BATON_CODEX=" + fake, "FAKE_AGENT_WRITE=" + filepath.Join(dir, "added.txt")}
	planInRoom(t, dir, env)

	p := startSized(t, dir, 60, 40, []string{"chat", "--resume", "--in-place"}, env...)
	p.until(t, "last 4 turns:")
	p.until(t, "active agent: codex")
	line := regexp.MustCompile(`ctx codex · plan (\d+)s gate -7 · (\d+) changed[^\r\n]*`)
	m := p.untilRE(t, line)
	if m[2] != "0" || len([]rune(m[0])) > 59 {
		t.Fatalf("status line %q", m[0])
	}
	p.until(t, "codex› ")
	p.send(t, "/execute\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	m = p.untilRE(t, line)
	if m[2] != "1" || len([]rune(m[0])) > 59 {
		t.Fatalf("status line after /execute %q", m[0])
	}
	p.until(t, "codex› ")
	// Ctrl-C on an empty prompt warns and stays; a second leaves.
	p.send(t, "\x03")
	p.until(t, "press Ctrl-C again")
	p.send(t, "\x03")
	p.until(t, "bye.")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(p.String(), "┌") {
		t.Fatal("a box was drawn on a 60-column terminal")
	}
}

func TestPTYResumeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "--resume", "--agent", "codex"}, "--resume restores the active agent from the log"},
		{[]string{"chat", "--resume", "--recap", "0"}, "--recap must be from 1 to 200"},
	} {
		bin, _ := binaries(t)
		cmd := exec.Command(bin, c.args...)
		cmd.Dir = newRepo(t)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
	}
	// Piped (no terminal): resume and the one-line status still work.
	dir := newRepo(t)
	bin, _ := binaries(t)
	planLog(t, dir)
	cmd := exec.Command(bin, "chat", "--resume", "--recap", "2")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader("/status\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := string(out)
	for _, w := range []string{"last 2 turns:", "active agent: codex", "ctx codex · plan none · 0 changed", "[you] /status"} {
		if !strings.Contains(s, w) {
			t.Fatalf("piped output lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "\x1b") {
		t.Fatalf("escape codes in piped output:\n%q", s)
	}
}

// planLog writes a small log in which codex became the active agent.
func planLog(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "resume", "finished-loop.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, ".ai-session", "conversation.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPTYResumeOffersTheUnfinishedLoop(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	sd := filepath.Join(dir, ".ai-session")
	os.MkdirAll(sd, 0o700)
	b, err := os.ReadFile(filepath.Join("testdata", "resume", "midloop.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sd, "conversation.jsonl"), b, 0o600)
	os.WriteFile(filepath.Join(sd, "plan.md"), []byte(fullPlan), 0o600)
	env := []string{"NO_COLOR=1", "RELAY_BATON_CLAUDE=" + fake, "RELAY_BATON_CODEX=" + fake, "FAKE_AGENT_WRITE=" + filepath.Join(dir, "added.txt")}

	// Declined: nothing runs, the prompt comes back.
	p := startSized(t, dir, 120, 50, []string{"chat", "--resume", "--in-place"}, env...)
	p.until(t, "an unfinished /continue loop: 1 of 4 steps ran (the room closed during it")
	p.until(t, "offering to continue from step 2 of 4")
	p.until(t, "resume:  continues an unfinished loop at step 2 of 4")
	p.until(t, "run this? [y/N/e] ")
	// The short preview cuts the prompt; v shows the step's outcome in it.
	p.send(t, "v")
	p.until(t, "│ continue step 1/4 by codex: exit 0, 1 changed files; added the flag to main.go")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "\r")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "codex› ")
	p.send(t, "\x04")
	p.wait(t)
	if _, err := os.Stat(filepath.Join(dir, "added.txt")); err == nil {
		t.Fatal("the declined loop ran")
	}

	// Confirmed: steps 2 and 3 run; the fake codex writes the same file
	// each time, so step 3 makes no progress and the loop stops.
	p = startSized(t, dir, 120, 50, []string{"chat", "--resume", "--in-place"}, env...)
	p.until(t, "offering to continue from step 2 of 4")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "step 2 of 4")
	p.until(t, "step 3 of 4")
	p.until(t, "/continue stopped after 3 of 4 steps: no progress")
	p.until(t, "codex› ")
	p.until(t, "changed  1 file")
	p.until(t, "last run codex /continue exit 0")
	p.send(t, "\x04")
	p.wait(t)

	// Finished now: a third resume offers nothing.
	p = startSized(t, dir, 120, 50, []string{"chat", "--resume", "--in-place"}, env...)
	p.until(t, "last run: codex /continue")
	p.until(t, "codex› ")
	p.send(t, "\x04")
	p.wait(t)
	if strings.Contains(p.String(), "unfinished /continue") {
		t.Fatalf("a finished loop was offered:\n%s", p.String())
	}
}
