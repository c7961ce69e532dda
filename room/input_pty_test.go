package room

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// Input safety through a real pty, with the real claude CLI against the
// mock: a paste is one message and answers nothing, a key typed before a
// preview confirms nothing, and without a terminal no agent runs.

func countKind(list []events.Event, k events.Kind) int {
	n := 0
	for _, e := range list {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func TestE2EPastedBlockIsOneMessageAndConfirmsNothing(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("should not run")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "\x1b[200~first line of the question\r\ny\r\nthird line\x1b[201~")
	p.until(t, "«paste 1: 3 lines, ")
	p.send(t, "\r")
	p.until(t, "│ first line of the question")
	p.until(t, "│ y")
	p.until(t, "│ third line")
	p.until(t, "run this? [y/N/e] ")
	// A paste while asking answers nothing either.
	p.send(t, "\x1b[200~y\r\x1b[201~")
	p.until(t, "ignored a paste while asking")
	p.send(t, "n\r")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude was started: the mock got %d requests", n)
	}
	list := readLog(t, dir)
	if n := countKind(list, events.KindPromptPreview); n != 1 {
		t.Fatalf("%d previews, want 1", n)
	}
	if n := strings.Count(p.String(), "preview: /ask"); n != 1 {
		t.Fatalf("%d previews on screen:\n%s", n, p.String())
	}
}

func TestE2ETypedAheadYesConfirmsNothing(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("## Goal\nx")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\ry\r") // the y arrives before the preview exists
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r") // answered: the typed-ahead y was not taken as one

	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("the mock got %d requests", n)
	}
}

func TestPipedStdinRunsNoAgentWithoutYes(t *testing.T) {
	bin, fake := binaries(t)
	dir := newRepo(t)
	pids := filepath.Join(t.TempDir(), "pids")
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "NO_COLOR=1", "RELAY_BATON_CLAUDE=" + fake, "FAKE_AGENT_PIDS=" + pids}
		cmd.Stdin = strings.NewReader("/plan add a flag\ny\n")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	out := run("chat")
	if _, err := os.Stat(pids); err == nil {
		t.Fatalf("an agent ran with piped stdin and no --yes:\n%s", out)
	}
	if strings.Count(out, "pass --yes") != 2 {
		t.Fatalf("output:\n%s", out)
	}
	out = run("chat", "--yes")
	b, err := os.ReadFile(pids)
	if err != nil || len(strings.Fields(string(b))) == 0 {
		t.Fatalf("chat --yes ran no agent: %v\n%s", err, out)
	}
}

// On a terminal a confirmation takes one key, no Enter: v shows the whole
// preview and asks again, y runs; the rest of a typed "yes" and the Enter
// after it reach nothing.
func TestE2EOneKeyConfirmation(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("one key was enough")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "hello there\r")
	p.until(t, "e edits (one key, no Enter) ")
	if strings.Contains(p.String(), "cwd:") {
		t.Fatalf("the short preview shows the directory:\n%s", p.String())
	}
	p.send(t, "v")
	p.until(t, "cwd:")
	p.until(t, "env stripped:")
	p.until(t, "run this? [y/N/e] y runs, v views all, e edits (one key, no Enter) ")
	p.send(t, "yes\r")
	p.untilWithin(t, "one key was enough", 90*time.Second)
	p.untilWithin(t, "claude: exit 0", 30*time.Second)
	p.send(t, "/note after\r")
	p.until(t, "noted.")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n == 0 {
		t.Fatal("y did not start claude")
	}
	var notes []string
	for _, e := range readLog(t, dir) {
		if e.Role == events.RoleUser && e.Kind == events.KindMessage {
			notes = append(notes, e.Text)
		}
	}
	// "es" and the Enter reached no prompt: the only user messages are the question and the note.
	if strings.Join(notes, "|") != "hello there|after" {
		t.Fatalf("user messages %q", notes)
	}
}

// Through a pty: the terminal reports focus lost (CSI O), a run ends, and
// the room sends the desktop notification; the report is not typed input.
func TestE2ENotifyWhenUnfocused(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("done thinking")))
	dir := newRepo(t)
	p := startBinary(t, dir, append(agenttest.OfflineEnv(t, a, nil), "NO_COLOR=1", "RELAY_BATON_NOTIFY=osc9", "RELAY_BATON_NOTIFY_AFTER=0")...)
	p.until(t, "\x1b[?1004h")
	p.until(t, "claude› ")
	p.send(t, "\x1b[Ohow are you\r")
	p.until(t, "run this? [y/N/e] ")
	if strings.Contains(p.String(), "[Ohow") {
		t.Fatalf("the focus report was typed in:\n%s", p.String())
	}
	p.send(t, "y")
	p.untilWithin(t, "done thinking", 90*time.Second)
	p.untilWithin(t, "\x1b]9;claude /ask finished\x07", 30*time.Second)
	// Focused again: the next end is quiet.
	p.send(t, "\x1b[I/note back\r")
	p.until(t, "noted.")
	p.send(t, "\x04")
	p.wait(t)
	if n := strings.Count(p.String(), "\x1b]9;"); n != 1 {
		t.Fatalf("%d notifications", n)
	}
}
