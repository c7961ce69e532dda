package room

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/room/runlock"
)

// The pinned context panel in a real terminal emulator (tmux): drawn in
// the bottom rows, redrawn in place, never printed into the scrollback.

type tmuxRoom struct {
	t    *testing.T
	tmux string
	sock string
}

func startTmuxRoom(t *testing.T, dir string, cols, rows int, args []string, env ...string) *tmuxRoom {
	t.Helper()
	tmux := agenttest.TmuxBin(t)
	bin, _ := binaries(t)
	r := &tmuxRoom{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := append([]string{"new-session", "-d", "-s", "g", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir,
		"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm-256color", "NO_COLOR=1", "LANG=C.UTF-8",
		"RELAY_BATON_WORKTREES=" + os.Getenv("RELAY_BATON_WORKTREES")}, env...)
	r.run(append(append(cmd, bin), args...)...)
	r.run("set-option", "-t", "g", "remain-on-exit", "on")
	t.Cleanup(func() { exec.Command(tmux, "-S", r.sock, "kill-server").Run() })
	return r
}

func (r *tmuxRoom) run(args ...string) string {
	r.t.Helper()
	out, err := exec.Command(r.tmux, append([]string{"-f", "/dev/null", "-S", r.sock}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types text literally, then Enter.
func (r *tmuxRoom) line(text string) {
	r.t.Helper()
	r.run("send-keys", "-t", "g", "-l", text)
	r.run("send-keys", "-t", "g", "Enter")
}

// screen is the visible pane; all adds the scrollback above it.
func (r *tmuxRoom) screen() string { return r.run("capture-pane", "-p", "-t", "g") }
func (r *tmuxRoom) all() string {
	return r.run("capture-pane", "-p", "-J", "-t", "g", "-S", "-", "-E", "-")
}
func (r *tmuxRoom) history() string {
	return r.run("capture-pane", "-p", "-J", "-t", "g", "-S", "-", "-E", "-1")
}

// tmuxGuard is the least a tmux test waits for a screen before it fails:
// a hang guard, never a bound (a loaded machine may take many seconds to
// start a CLI or redraw a pane).
const tmuxGuard = 2 * time.Minute

// wait waits until the pane and its scrollback show want n times or more.
func (r *tmuxRoom) wait(want string, n int, d time.Duration) {
	r.t.Helper()
	r.settle(fmt.Sprintf("%d× %q", n, want), d, func(all, _ string) bool { return strings.Count(all, want) >= n })
}

// settle waits until the pane (all: with its scrollback; screen: the
// visible rows) is the screen ok expects, and fails after the guard
// (at least tmuxGuard) with what it shows.
func (r *tmuxRoom) settle(what string, d time.Duration, ok func(all, screen string) bool) {
	r.t.Helper()
	deadline := time.Now().Add(max(d, tmuxGuard))
	for {
		all, scr := r.all(), r.screen()
		if ok(all, scr) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waited for %s; pane:\n%s\nvisible:\n%s", what, all, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pinnedAtBottom reports whether the visible rows end with the context
// panel, one copy of it in the pane, none in the scrollback, naming agent.
func (r *tmuxRoom) pinnedAtBottom(all, screen, agent string) bool {
	scr := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	return strings.Count(all, "┌─ context") == 1 && !strings.Contains(r.history(), "context ─") &&
		len(scr) >= 5 && strings.HasPrefix(scr[len(scr)-1], "└") && strings.HasPrefix(scr[len(scr)-5], "┌─ context") &&
		strings.Contains(strings.Join(scr[len(scr)-5:], "\n"), "agent    "+agent)
}

func TestTmuxPanelStaysPinned(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 30, []string{"chat"})
	r.wait("claude›", 1, 30*time.Second)
	r.wait("└───", 1, 30*time.Second)
	cmds := []string{"/status", "/note one", "/help", "/budget", "/note two", "/agent codex", "/status", "/note three", "/review", "/agent claude"}
	for i, c := range cmds {
		r.line(c)
		r.wait("› "+c, 1, 30*time.Second)
		r.wait("›", i+2, 30*time.Second)
	}
	// The last redraw lands after the prompt: settle on one panel, in the
	// bottom rows, naming claude, and none in the scrollback. A panel
	// printed into the scrollback stays there, so this never settles.
	r.settle("one panel pinned to the bottom rows after ten commands", 0, func(all, scr string) bool {
		return r.pinnedAtBottom(all, scr, "claude")
	})
	if h := r.history(); strings.Contains(h, "│ agent ") {
		t.Fatalf("the scrollback holds the panel:\n%s", h)
	}
	// The conversation scrolled into the scrollback, above the panel.
	if !strings.Contains(r.history(), "/status") {
		t.Fatalf("nothing scrolled into the scrollback:\n%s", r.all())
	}
	// A narrow terminal gets the one-line status instead, and the panel's
	// rows are given back. Each prompt measures the terminal again, so the
	// next one sees 80 columns whenever the room handles the SIGWINCH.
	r.run("resize-window", "-t", "g", "-x", "80", "-y", "30")
	r.line("/note narrow")
	r.wait("ctx claude", 1, 30*time.Second)
	r.line("/exit")
	r.wait("bye.", 1, 30*time.Second)
}

// TestTmuxTwoTurnConversation is the README's capture: a two-turn
// conversation with the real claude CLI against the mock, the panel pinned.
// -update writes it to testdata/golden/conversation-120.txt.
func TestTmuxTwoTurnConversation(t *testing.T) {
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Text("Noted: the word is PINEAPPLE.")),
		agenttest.Reply(agenttest.Text("You asked me to remember PINEAPPLE.")),
	)
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 40, []string{"chat"}, agenttest.OfflineEnv(t, a, nil)...)
	r.wait("claude›", 1, 30*time.Second)
	r.line("remember the word PINEAPPLE")
	r.wait("run this? [y/N/e]", 1, 20*time.Second)
	r.line("y")
	r.wait("Noted: the word is PINEAPPLE.", 1, 90*time.Second)
	r.wait("last run claude /ask", 1, 20*time.Second)
	r.line("what word did I ask you to remember?")
	r.wait("run this? [y/N/e]", 2, 20*time.Second)
	r.line("y")
	r.wait("You asked me to remember PINEAPPLE.", 1, 90*time.Second)
	r.wait("claude: exit 0", 2, 20*time.Second)
	r.settle("the panel pinned after the second run", 0, func(all, scr string) bool {
		return r.pinnedAtBottom(all, scr, "claude") && strings.Contains(scr, "last run claude /ask exit 0")
	})
	all := r.all()
	if !strings.Contains(all, "continues claude conversation ") {
		t.Fatalf("the second preview does not name the conversation:\n%s", all)
	}
	reqs := a.Agent()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "Noted: the word is PINEAPPLE.") {
		t.Fatalf("the follow-up request lacks the earlier turn")
	}
	if updateGolden() {
		got := strings.ReplaceAll(all, dir, "/tmp/demo")
		if err := os.WriteFile(filepath.Join("testdata", "golden", "conversation-120.txt"), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitScreen waits until the visible pane satisfies ok (the screen the
// person sees, not the scrollback).
func (r *tmuxRoom) waitScreen(what string, ok func(scr string) bool, d time.Duration) string {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		scr := r.screen()
		if ok(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waited for %s; screen:\n%s", what, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// panelAtBottom reports whether the pinned panel's five rows end the screen.
func panelAtBottom(scr string) bool {
	rows := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	return len(rows) >= 5 && strings.HasPrefix(rows[len(rows)-5], "┌─ context") &&
		strings.HasPrefix(rows[len(rows)-1], "└") && strings.Contains(rows[len(rows)-4], "agent    claude")
}

// The line editor erases to the end of the screen when it redraws its line
// (an empty Enter, Ctrl-C): the pinned panel is painted again each time.
func TestTmuxEmptyEnterKeepsPanel(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 30, []string{"chat"})
	r.waitScreen("the panel", panelAtBottom, 30*time.Second)
	r.run("send-keys", "-t", "g", "Enter")
	r.run("send-keys", "-t", "g", "Enter")
	r.waitScreen("three prompts", func(s string) bool { return strings.Count(s, "claude›") == 3 }, 30*time.Second)
	// The panel is redrawn in the same write as the erase: no wait for it.
	if scr := r.screen(); !panelAtBottom(scr) {
		t.Fatalf("after two empty Enters the panel is gone:\n%s", scr)
	}
	r.run("send-keys", "-t", "g", "C-c")
	scr := r.waitScreen("the Ctrl-C hint", func(s string) bool {
		return strings.Contains(s, "press Ctrl-C again") && strings.Count(s, "claude›") == 4
	}, 30*time.Second)
	if !panelAtBottom(scr) {
		t.Fatalf("after Ctrl-C at an empty prompt the panel is gone:\n%s", scr)
	}
	if n := strings.Count(r.all(), "┌─ context"); n != 1 {
		t.Fatalf("%d copies of the panel:\n%s", n, r.all())
	}
}

// Shrinking the terminal below the panel's width gives its rows back and
// shows the prompt, with the line being typed, at once; widening it again
// pins the panel again, once.
func TestTmuxResizeKeepsPrompt(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 140, 30, []string{"chat"})
	r.waitScreen("the panel", panelAtBottom, 30*time.Second)
	// A full screen: the prompt is on the region's last row.
	r.line("/help")
	r.wait("/help", 2, 30*time.Second)
	r.line("/status")
	r.wait("last run: none", 1, 30*time.Second)
	r.run("send-keys", "-t", "g", "-l", "half typed")
	r.waitScreen("the typed text", func(s string) bool { return strings.Contains(s, "claude› half typed") }, 30*time.Second)
	r.run("resize-window", "-t", "g", "-x", "80", "-y", "30")
	r.waitScreen("the prompt and no panel at 80 columns", func(s string) bool {
		return strings.Contains(s, "claude› half typed") && !strings.Contains(s, "context") && !strings.Contains(s, "│")
	}, 30*time.Second)
	r.run("resize-window", "-t", "g", "-x", "140", "-y", "30")
	r.waitScreen("the panel again at 140 columns", func(s string) bool {
		return panelAtBottom(s) && strings.Contains(s, "claude› half typed") && strings.Count(s, "┌─ context") == 1
	}, 30*time.Second)
	// The line typed before the resizes is still the line sent.
	r.run("send-keys", "-t", "g", "C-u")
	r.line("/note after resize")
	r.wait("noted.", 1, 30*time.Second)
}

// markdownReply is a reply as agents write them: a heading, a list, a
// table, a fence, emphasis and a link.
const markdownReply = "## Plan\n\nThe change touches **two files**; run `pytest -q` after each step.\n\n" +
	"- greet.py: add `shout(name)` returning the greeting in upper case, with the same punctuation\n" +
	"- test_greet.py: one test per greeting\n\n" +
	"| file | lines |\n|:--|--:|\n| greet.py | 3 |\n| test_greet.py | 12 |\n\n" +
	"```python\ndef shout(name):\n    return greet(name).upper()\n```\n\nSee [the guide](https://example.com/guide)."

// A Markdown reply from the real claude CLI renders in the room: no "##",
// no pipes, no fences, every line with the gutter, the rows it wraps to
// under a hanging indent (golden
// testdata/golden/markdown-80.txt, -update rewrites it); under NO_COLOR
// the same reply is shown as written.
func TestTmuxMarkdownReply(t *testing.T) {
	for _, colour := range []bool{true, false} {
		t.Run(fmt.Sprint("colour=", colour), func(t *testing.T) {
			a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text(markdownReply)))
			dir := goldenRepo(t)
			os.Remove(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
			args := []string{"chat"}
			if colour {
				args = []string{"--color", "always", "chat"}
			}
			r := startTmuxRoom(t, dir, 80, 45, args, agenttest.OfflineEnv(t, a, nil)...)
			r.wait("› ", 1, 30*time.Second)
			r.line("/agent claude")
			r.wait("claude›", 2, 30*time.Second)
			r.line("what is the plan?")
			r.wait("run this?", 1, 30*time.Second)
			r.run("send-keys", "-t", "g", "y")
			r.run("send-keys", "-t", "g", "Enter")
			r.wait("claude: exit 0", 1, 90*time.Second)
			all := r.all()
			start := strings.Index(all, "[claude] ")
			end := strings.Index(all, "[relay-baton] claude: exit 0")
			if start < 0 || end < start {
				t.Fatalf("no reply:\n%s", all)
			}
			reply := all[start:end]
			// Spaces a thinking pulse left (erased with spaces) are not the reply's.
			reply = regexp.MustCompile(` +\n`).ReplaceAllString(reply, "\n")
			for i, l := range strings.Split(strings.TrimRight(reply, "\n"), "\n") {
				if !(strings.HasPrefix(l, "[claude]") || strings.HasPrefix(l, "         ")) || len([]rune(l)) > 80 {
					t.Fatalf("row %d lacks the gutter (or a wrapped row its indent) or is too wide: %q\n%s", i+1, l, reply)
				}
			}
			if !colour {
				for _, raw := range []string{"[claude] ## Plan", "[claude] | file | lines |", "[claude] ```python", "**two files**"} {
					if !strings.Contains(reply, raw) {
						t.Fatalf("under NO_COLOR the reply is not as written (%q missing):\n%s", raw, reply)
					}
				}
				return
			}
			for _, raw := range []string{"##", "|:--", "```", "**", "`pytest"} {
				if strings.Contains(reply, raw) {
					t.Fatalf("%q left in the rendered reply:\n%s", raw, reply)
				}
			}
			if !strings.Contains(reply, "[claude] file          │ lines") || !strings.Contains(reply, "[claude] • greet.py") {
				t.Fatalf("table or list not rendered:\n%s", reply)
			}
			// The log keeps the reply's text as written (folded to one line).
			// It is logged after the run's summary line: the next prompt
			// says the turn is over.
			r.wait("claude›", 3, 30*time.Second)
			b, err := os.ReadFile(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
			if err != nil || !strings.Contains(string(b), "## Plan The change touches **two files**; run `pytest -q`") {
				t.Fatalf("the log does not hold the raw reply (%v):\n%s", err, b)
			}
			path := filepath.Join("testdata", "golden", "markdown-80.txt")
			if updateGolden() {
				if err := os.WriteFile(path, []byte(reply), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./room -run TestTmuxMarkdownReply -update writes it)", err)
			}
			if reply != string(want) {
				t.Fatalf("the rendered reply differs from %s (-update rewrites it)\n--- got\n%s--- want\n%s", path, reply, want)
			}
		})
	}
}

// The pinned panel follows the repository while the prompt waits: a file
// written meanwhile is counted without a key being pressed.
func TestTmuxPanelRefreshesAtThePrompt(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 30, []string{"chat"})
	r.waitScreen("the panel with no change", func(s string) bool { return panelAtBottom(s) && strings.Contains(s, "changed  0 files") }, 30*time.Second)
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.waitScreen("the panel counting the new file", func(s string) bool {
		return panelAtBottom(s) && strings.Contains(s, "changed  1 file ")
	}, 60*time.Second)
	if n := strings.Count(r.all(), "┌─ context"); n != 1 {
		t.Fatalf("%d copies of the panel:\n%s", n, r.all())
	}
}

// Another screen's run takes the repository while the prompt waits: the
// pinned panel grows by its "held by" row, and shrinks again when the run
// lets go. The conversation's last lines and the prompt move up with the
// panel and stay on screen, once: no line is painted over, and no old
// prompt is left behind.
func TestTmuxPanelGrowsAndShrinksKeepsTheLines(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 30, []string{"chat"})
	r.waitScreen("the panel", panelAtBottom, 30*time.Second)
	// A full screen: the prompt is on the scroll region's last row.
	r.line("/help")
	r.wait("/help", 2, 30*time.Second)
	r.line("/note the line above the prompt")
	r.wait("noted.", 1, 30*time.Second)
	prompts := func(s string) int { return strings.Count(s, "claude›") }
	r.waitScreen("the prompt after the note", func(s string) bool { return prompts(r.all()) == 3 && panelAtBottom(s) }, 30*time.Second)
	held := func(s string) bool {
		rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return len(rows) >= 6 && strings.HasPrefix(rows[len(rows)-6], "┌─ context") && strings.HasPrefix(rows[len(rows)-1], "└") &&
			strings.Contains(s, "held by  claude /ask,")
	}
	l := runlock.New(dir, filepath.Join(dir, ".ai-session"), true, time.Now, func(string, ...any) {})
	release, err := l.Hold("claude", "ask")
	if err != nil {
		t.Fatal(err)
	}
	scr := r.waitScreen("the panel with its held-by row", held, time.Minute)
	above := strings.TrimRight(strings.Split(scr, "┌─ context")[0], "\n ")
	if !strings.HasSuffix(above, "[relay-baton] noted.\nclaude›") {
		t.Fatalf("the panel grew over the conversation's last lines:\n%s", scr)
	}
	release()
	scr = r.waitScreen("the panel without its held-by row", func(s string) bool { return panelAtBottom(s) && !strings.Contains(s, "held by") }, time.Minute)
	if !strings.Contains(scr, "noted.") || prompts(r.all()) != 3 {
		t.Fatalf("the panel shrank and left the old prompt behind (or lost a line):\n%s", r.all())
	}
	r.line("/note after the panel shrank")
	r.wait("noted.", 2, 30*time.Second)
	r.waitScreen("the next prompt", func(s string) bool { return prompts(r.all()) == 4 && panelAtBottom(s) }, 30*time.Second)
}
