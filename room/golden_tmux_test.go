package room

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The room as a person sees it after `chat --resume`, captured from tmux
// (a real terminal emulator: wrapping, cursor moves and erases applied) at
// 60, 100 and 200 columns, and compared with testdata/golden/resume-*.txt.
// go test ./room -run TestTmuxResumeGolden -update rewrites them.

// goldenRoot is a fixed-length repository path, so that layouts compare
// across runs once it is replaced by a placeholder of the same length.
const goldenRootPrefix = "/tmp/rb-golden-"

var (
	tsRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	// A date may be wrapped (at its space) onto a row of its own.
	dateRE = regexp.MustCompile(`\d{4}-\d\d-\d\d( |\n\[relay-baton\] |\n +)\d\d:\d\dZ`)
)

// goldenRepo builds the repository and log the captures show: codex active,
// a plan 3h old lacking a section, a finished loop, one changed file, an
// orchestrator target with two queued messages, the oldest 2h old.
func goldenRepo(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	dir := goldenRootPrefix + hex.EncodeToString(b)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatalf("cannot create %s: %v", dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	gitRun(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-qm", "init")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\n// verbose\n"), 0o644)
	// The chat folder is not the project's change.
	os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(".claude/\n"), 0o644)

	now := time.Now().UTC()
	sd := filepath.Join(dir, ".ai-session")
	os.MkdirAll(sd, 0o700)
	plan := strings.Replace(fullPlan, "## Risks\nnone\n", "", 1)
	os.WriteFile(filepath.Join(sd, "plan.md"), []byte(plan), 0o600)
	at := now.Add(-3*time.Hour - 5*time.Minute)
	os.Chtimes(filepath.Join(sd, "plan.md"), at, at)

	// The log: the finished-loop fixture, then a /target and a chat
	// message, shifted so that the last event is 2h old.
	var list []events.Event
	for _, name := range []string{"finished-loop.jsonl", "pending-chat.jsonl"} {
		f, err := os.Open(filepath.Join("testdata", "resume", name))
		if err != nil {
			t.Fatal(err)
		}
		events.Scan(f, func(e events.Event) error {
			id, _ := metaMap(e.Meta)["messageId"].(string)
			keep := name == "finished-loop.jsonl" || strings.HasPrefix(e.Text, "/target") || id == "bbbb2222"
			if keep {
				list = append(list, e)
			}
			return nil
		})
		f.Close()
	}
	shift := now.Add(-2 * time.Hour).Sub(list[len(list)-1].Time())
	var buf []byte
	for _, e := range list {
		e.TS = e.Time().Add(shift).Format(events.TimeFormat)
		buf = events.AppendJSON(buf, e)
		buf = append(buf, '\n')
	}
	os.WriteFile(filepath.Join(sd, "conversation.jsonl"), buf, 0o600)

	s, err := conversation.OpenSession(dir, "0b6f6a3e-1111-4222-8333-444455556666")
	if err != nil {
		t.Fatal(err)
	}
	s.Ensure()
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	for i, id := range []string{"zzzz0000", "bbbb2222"} {
		created := now.Add(-2*time.Hour - time.Duration(10-i)*time.Minute)
		m, _ := json.Marshal(conversation.Message{ID: id, From: "relay-baton", Text: "queued " + id, CreatedAt: created})
		os.WriteFile(filepath.Join(s.InboxDir(), fmt.Sprintf("%013d-%s.json", created.UnixMilli(), id)), m, 0o600)
	}
	return dir
}

// tmuxCapture runs `relay-baton chat --resume` in a detached tmux session of
// cols x rows and returns the whole pane (scrollback included) once the
// prompt is back and the screen stays the same, with wrapped lines joined
// (so that varying text can be normalised before rewrap re-wraps it).
func tmuxCapture(t *testing.T, dir string, cols, rows int) string {
	t.Helper()
	tmux := agenttest.TmuxBin(t)
	bin, fake := binaries(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-f", "/dev/null", "-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-s", "g", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir,
		// Both CLIs "installed" (the fake agent): the first screen says
		// nothing of a missing one, whatever the machine has on PATH.
		"env", "-i", "PATH="+os.Getenv("PATH"), "HOME="+dir, "TERM=xterm-256color", "NO_COLOR=1", "LANG=C.UTF-8",
		"RELAY_BATON_CLAUDE="+fake, "RELAY_BATON_CODEX="+fake,
		"RELAY_BATON_WORKTREES="+os.Getenv("RELAY_BATON_WORKTREES"), bin, "chat", "--resume", "--recap", "4")
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	prev := ""
	deadline := time.Now().Add(tmuxGuard) // a hang guard: it returns once the screen settles
	for time.Now().Before(deadline) {
		time.Sleep(150 * time.Millisecond)
		cur := run("capture-pane", "-p", "-J", "-t", "g", "-S", "-", "-E", "-")
		trim := strings.TrimRight(cur, "\n ")
		// The prompt is the last line, or (a pinned panel) the last line
		// above the panel's box.
		ready := (strings.HasSuffix(trim, "codex›") && strings.Contains(cur, "ctx codex")) ||
			(strings.Contains(cur, "codex›") && strings.HasSuffix(trim, "┘"))
		if ready && cur == prev {
			return cur
		}
		prev = cur
	}
	t.Fatalf("the room did not settle at %d columns:\n%s", cols, prev)
	return ""
}

// rewrap splits each line at cols runes, as the terminal showed it (every
// character the room prints here is one column wide).
func rewrap(s string, cols int) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		r := []rune(strings.TrimRight(l, " "))
		for len(r) > cols {
			out = append(out, string(r[:cols]))
			r = r[cols:]
		}
		out = append(out, string(r))
	}
	return strings.Join(out, "\n") + "\n"
}

func TestTmuxResumeGolden(t *testing.T) {
	placeholder := goldenRootPrefix + "XXXXXXXX"
	for _, w := range []int{60, 100, 200} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			dir := goldenRepo(t)
			got := tmuxCapture(t, dir, w, 45)
			got = strings.ReplaceAll(got, dir, placeholder)
			got = tsRE.ReplaceAllString(got, "YYYY-MM-DDThh:mm:ss.mmmZ")
			got = dateRE.ReplaceAllString(got, "YYYY-MM-DD${1}hh:mmZ")
			got = rewrap(got, w)
			for i, l := range strings.Split(got, "\n") {
				if n := len([]rune(l)); n > w {
					t.Fatalf("line %d is %d columns on a %d-column terminal: %q", i+1, n, w, l)
				}
			}
			path := filepath.Join("testdata", "golden", fmt.Sprintf("resume-%d.txt", w))
			if updateGolden() {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./room -run TestTmuxResumeGolden -update)", err)
			}
			if got != string(want) {
				t.Fatalf("capture at %d columns differs from %s (go test ./room -run TestTmuxResumeGolden -update rewrites it)\n--- got\n%s--- want\n%s", w, path, got, want)
			}
		})
	}
}
