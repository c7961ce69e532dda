//go:build linux && !portable

// Not in the portable build: there, as on macOS, the holder of the
// thread's writer lock is not known (filelock.WriterPID), so a thread
// whose TUI quit stays live until the daemon lets go (docs/platforms.md).

package room

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/codex"
)

// TestE2ECodexQuitTUIIsNoTarget: the real codex TUI in tmux answers a
// first prompt, then the user quits it (/quit). Its app-server daemon
// keeps the thread loaded (it still holds the writer lock), but no
// terminal shows the thread any more: `targets` does not list it (`--all`
// says why), and `send` refuses it, naming `codex resume <id>`, with
// nothing queued and no request to the model.
func TestE2ECodexQuitTUIIsNoTarget(t *testing.T) {
	codexBin := agenttest.CodexBin(t)
	tmux := agenttest.TmuxBin(t)
	o := agenttest.NewOpenAI(t)
	o.When("AFTER-QUIT", agenttest.Reply(agenttest.Text("DAEMON-ANSWER: nobody sees this.")))
	o.When("FIRST-PROMPT", agenttest.Reply(agenttest.Text("READY-33")))
	dir, codexHome, baseEnv := codexWorkspace(t, o, codexBin)
	bin, _ := binaries(t)
	rb := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a hang guard
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = dir, baseEnv
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("relay-baton %v: %v", args, err)
		}
		return string(out), code
	}
	targets := func(args ...string) []conversation.Target {
		t.Helper()
		out, code := rb(append([]string{"targets", "--json"}, args...)...)
		var ts []conversation.Target
		if code != 0 || json.Unmarshal([]byte(out), &ts) != nil {
			t.Fatalf("targets --json (exit %d):\n%s", code, out)
		}
		return ts
	}
	tm, _ := startCodexTUI(t, tmux, codexBin, dir, baseEnv, "READY-33")
	var thread string
	eventually(t, 30*time.Second, "the TUI's thread, live, in targets", func() bool {
		for _, tg := range targets() {
			if tg.Agent == conversation.AgentCodex && tg.Loaded {
				thread = tg.SessionID
				return true
			}
		}
		return false
	})
	// The user quits the TUI; its tmux pane (and server) go with it.
	tm("send-keys", "-t", "c", "-l", "/quit")
	time.Sleep(300 * time.Millisecond)
	tm("send-keys", "-t", "c", "Enter") // the pane is still there: /quit runs on this Enter
	t.Setenv("CODEX_HOME", codexHome)
	eventually(t, 30*time.Second, "the TUI gone", func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			c := string(b)
			if strings.Contains(c, "codex") && strings.Contains(c, "--sandbox\x00workspace-write") {
				if cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd"); cwd == dir {
					return false
				}
			}
		}
		return true
	})
	if !codex.Loaded(thread) {
		t.Skip("the daemon unloaded the thread at once: nothing to tell apart")
	}
	requests := len(o.Requests())
	for _, tg := range targets() {
		if tg.SessionID == thread {
			t.Fatalf("a thread whose TUI quit is a target: %+v", tg)
		}
	}
	all, _ := rb("targets", "--all")
	if !strings.Contains(all, "ended (its TUI quit; a codex daemon still holds it)") {
		t.Fatalf("targets --all:\n%s", all)
	}
	out, code := rb("send", "--session", thread, "AFTER-QUIT: are you there?")
	if code == 0 || !strings.Contains(out, "its TUI has quit") || !strings.Contains(out, "codex resume "+thread) || strings.Contains(out, "delivered via") {
		t.Fatalf("send to a quit TUI's thread (exit %d):\n%s", code, out)
	}
	if !codex.Loaded(thread) {
		t.Log("the daemon unloaded the thread while the test ran (the checks above ran while it held it)")
	}
	s, _ := conversation.OpenSession(dir, thread)
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Fatalf("%d message(s) queued for a thread nobody sees", q.Depth)
	}
	if n := len(o.Requests()); n != requests {
		t.Fatalf("the daemon got %d request(s) after the TUI quit", n-requests)
	}
	t.Logf("send refused:\n%s", out)
}
