package room

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
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
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	bin, _ := binaries(t)
	r := &tmuxRoom{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := append([]string{"new-session", "-d", "-s", "g", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir,
		"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm-256color", "NO_COLOR=1", "LANG=C.UTF-8"}, env...)
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
