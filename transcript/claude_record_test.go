package transcript_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/transcript"
)

// The transcripts Claude Code 2.1.328 writes today, recorded from the real
// CLI against the mock: a long-lived stream-json session (several turns
// with tool calls, a chat message queued while a tool runs) and an
// interactive TUI session in tmux. TestRecordTodayTranscripts checks that
// the CLI still writes the shapes testdata/claude-2.1.328-today.jsonl
// stands for (large attachment lines whose type comes after the nested
// attachment, api-request-* lines, queue operations) and that the parser
// reads every recorded line as encoding/json does;
//
//	go test ./transcript -run TestRecordTodayTranscripts -record
//
// rewrites the fixture (the bench builds its "today" transcripts from it).

var record = flag.Bool("record", false, "rewrite testdata/claude-2.1.328-today.jsonl from the real CLI")

const todayFixture = "testdata/claude-2.1.328-today.jsonl"

func TestRecordTodayTranscripts(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"hello\") }\n",
		"README.md": "# demo\n\nA small repository the recorded sessions work in.\n",
	})
	abs := func(n string) string { return filepath.Join(root, n) }
	mock := agenttest.NewAnthropic(t)
	// The first rule whose text is in the last user message answers, so
	// the specific ones come first (the TUI session's, whose messages carry
	// the git status, then the stream-json session's).
	mock.When("tui-listed", agenttest.Reply(agenttest.Text("A Go program (main.go) and a README.")))
	mock.When("what is in this folder", agenttest.Reply(agenttest.ToolUse("Bash", map[string]any{"command": "ls -la; echo tui-listed", "description": "list the folder"})))
	mock.When("thanks", agenttest.Reply(agenttest.Thinking("Wrap up."), agenttest.Text("You are welcome.")))
	mock.When("listing-done", agenttest.Reply(agenttest.Text("The repository holds a Go program that prints hello and a README.")))
	mock.When("File created successfully", agenttest.Reply(agenttest.ToolUse("Edit", map[string]any{"file_path": abs("NOTES.md"), "old_string": "recorded", "new_string": "recorded offline"})))
	mock.When("has been updated", agenttest.Reply(agenttest.ToolUse("Grep", map[string]any{"pattern": "Notes", "path": root, "output_mode": "content"})))
	mock.When("# Notes", agenttest.Reply(agenttest.Text("NOTES.md is written and edited.")))
	mock.When("look at the repository", agenttest.Reply(agenttest.Thinking("Let me look around first."), agenttest.ToolUse("Glob", map[string]any{"pattern": "**/*.go"})))
	mock.When("println", agenttest.Reply(agenttest.Bash("sleep 2; git status --short; echo listing-done")))
	mock.When("main.go", agenttest.Reply(agenttest.ToolUse("Read", map[string]any{"file_path": abs("main.go")})))
	mock.When("add a notes file", agenttest.Reply(agenttest.ToolUse("Write", map[string]any{"file_path": abs("NOTES.md"), "content": "# Notes\n\n- recorded from the real CLI\n"})))
	mock.When("queued while busy", agenttest.Reply(agenttest.Text("Got the queued message.")))

	env := agenttest.ClaudeEnv(t, mock, "")
	home, _ := agenttest.EnvValue(env, "HOME")
	trust, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "projects": map[string]any{root: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o600); err != nil {
		t.Fatal(err)
	}
	fullEnv := append(os.Environ(), env...)

	// 1. A long-lived stream-json session.
	cmd := exec.Command(bin, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--allowedTools", "Bash Read Write Edit Glob Grep")
	cmd.Dir, cmd.Env = root, fullEnv
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	results := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var l struct{ Type, Result string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type == "result" {
				results <- l.Result
			}
		}
		close(results)
	}()
	say := func(text string) {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	await := func(want string) {
		t.Helper()
		deadline := time.After(90 * time.Second)
		for {
			for _, r := range got {
				if strings.Contains(r, want) {
					return
				}
			}
			select {
			case r, ok := <-results:
				if !ok {
					t.Fatalf("claude exited before answering %q (results %q): %s", want, got, stderr.String())
				}
				got = append(got, r)
			case <-deadline:
				t.Fatalf("no result %q within 90 s (results %q): %s", want, got, stderr.String())
			}
		}
	}
	say("look at the repository and tell me what it does")
	time.Sleep(1500 * time.Millisecond) // the Bash tool sleeps: this one queues
	say("a message queued while busy")
	await("prints hello")
	say("now add a notes file")
	await("NOTES.md is written")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("stream-json session: %v: %s", err, stderr.String())
	}

	// 2. An interactive TUI session in tmux.
	tuiSession(t, bin, root, fullEnv)

	// Every transcript the two sessions wrote.
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	sort.Strings(files)
	if len(files) < 2 {
		t.Fatalf("want the transcripts of two sessions, found %v", files)
	}
	var all []byte
	types := map[string]int{}
	bytesOf := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var k struct {
				Type       string
				Attachment struct{ Type string }
			}
			if err := json.Unmarshal(l, &k); err != nil {
				t.Fatalf("%s: a line is not JSON: %v", f, err)
			}
			name := k.Type
			if k.Attachment.Type != "" {
				name += "/" + k.Attachment.Type
			}
			types[name]++
			bytesOf[name] += len(l) + 1
		}
	}
	var names []string
	for n := range types {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return bytesOf[names[i]] > bytesOf[names[j]] })
	var sum strings.Builder
	for _, n := range names {
		fmt.Fprintf(&sum, "  %-40s %4d lines %8d bytes\n", n, types[n], bytesOf[n])
	}
	t.Logf("%d transcripts, %d bytes:\n%s", len(files), len(all), sum.String())
	// Today's shapes, the ones the fixture stands for.
	for _, want := range []string{"attachment", "api-request-shape", "api-request-blob", "queue-operation", "assistant", "user"} {
		found := false
		for n := range types {
			if n == want || strings.HasPrefix(n, want+"/") {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s line in the recorded transcripts", want)
		}
	}
	// The parser reads them all, and the tool calls show.
	tools := map[string]bool{}
	for _, l := range bytes.Split(all, []byte("\n")) {
		acts, err := transcript.ParseLine(l)
		if err != nil {
			t.Fatalf("ParseLine: %v on %.200s", err, l)
		}
		for _, a := range acts {
			if a.Tool != "" {
				tools[a.Tool] = true
			}
		}
	}
	for _, tool := range []string{"Glob", "Read", "Bash", "Write", "Edit", "Grep"} {
		if !tools[tool] {
			t.Errorf("no %s tool call read from the transcripts (saw %v)", tool, tools)
		}
	}
	if *record && !t.Failed() {
		if err := os.WriteFile(todayFixture, all, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", todayFixture, len(all))
	}
}

// tuiSession drives claude's interactive TUI in a detached tmux session:
// two prompts, the answers on screen, then /exit.
func tuiSession(t *testing.T, bin, root string, env []string) {
	t.Helper()
	tmux := agenttest.TmuxBin(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		c := exec.Command(tmux, append([]string{"-f", "/dev/null", "-S", sock}, args...)...)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	envArgs := []string{"env"}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || k == "PATH" || k == "ANTHROPIC_BASE_URL" || strings.HasPrefix(k, "CLAUDE_CODE_") || k == "DISABLE_AUTOUPDATER" {
			envArgs = append(envArgs, kv)
		}
	}
	envArgs = append(envArgs, "TERM=xterm-256color", "LANG=C.UTF-8")
	run(append([]string{"new-session", "-d", "-s", "tui", "-x", "120", "-y", "40", "-c", root},
		append(envArgs, bin, "--permission-mode", "default", "--allowedTools", "Bash")...)...)
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	screen := func() string { return run("capture-pane", "-p", "-t", "tui", "-S", "-", "-E", "-") }
	until := func(want string, d time.Duration) {
		t.Helper()
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if strings.Contains(screen(), want) {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the TUI did not show %q within %v:\n%s", want, d, screen())
	}
	until("❯", 30*time.Second)
	for _, p := range []struct{ prompt, answer string }{
		{"what is in this folder", "A Go program"},
		{"thanks", "You are welcome"},
	} {
		run("send-keys", "-t", "tui", "-l", p.prompt)
		time.Sleep(300 * time.Millisecond)
		run("send-keys", "-t", "tui", "Enter")
		until(p.answer, 60*time.Second)
	}
	run("send-keys", "-t", "tui", "-l", "/exit")
	time.Sleep(300 * time.Millisecond)
	run("send-keys", "-t", "tui", "Enter")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(tmux, "-S", sock, "has-session", "-t", "tui").Run() != nil {
			return // the TUI exited and took the tmux session with it
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the TUI did not exit after /exit:\n%s", screen())
}
