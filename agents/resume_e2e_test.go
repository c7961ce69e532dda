package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// Continuing a conversation (Request.Resume) with the real CLIs against
// the mocks: the follow-up request carries the earlier turn, the role's
// permission policy still applies, and an unknown id fails as ResumeFailed.

func TestPrepareResumeArgv(t *testing.T) {
	dir := t.TempDir()
	env := []string{"RELAY_BATON_CLAUDE=/bin/true", "RELAY_BATON_CODEX=/bin/true"}
	id := "0b7e8a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	inv, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "-p", Dir: dir, Env: env, Resume: id})
	if err != nil {
		t.Fatal(err)
	}
	n := len(inv.Argv)
	if i := slices.Index(inv.Argv, "--resume"); i < 0 || inv.Argv[i+1] != id || inv.Argv[n-2] != "--" || inv.Argv[n-1] != "-p" ||
		!slices.Contains(inv.Argv, "plan") || inv.Resume != id {
		t.Fatalf("claude argv %q", inv.Argv)
	}
	inv, err = agents.Prepare(agents.Request{Agent: agents.Codex, Role: agents.RoleAsk, Prompt: "q", Dir: dir, Env: env, Resume: id})
	if err != nil {
		t.Fatal(err)
	}
	// exec's options, then the subcommand, then the id and the prompt.
	got := strings.Join(inv.Argv[1:], " ")
	if !strings.HasPrefix(got, "exec --json --sandbox read-only -C ") || !strings.HasSuffix(got, " resume "+id+" -- q") {
		t.Fatalf("codex argv %q", inv.Argv)
	}
	for _, bad := range []string{"--dangerously-skip-permissions", "-x", "a b", "id;rm", "../x"} {
		if _, err := agents.Prepare(agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "q", Dir: dir, Env: env, Resume: bad}); err == nil {
			t.Errorf("Resume %q accepted", bad)
		}
	}
}

func TestClaudeResumeE2E(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, map[string]string{"a.txt": "hello\n"})
	mock := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Text("I will remember PINEAPPLE.")),
		agenttest.Reply(agenttest.ToolUse("Write", map[string]any{"file_path": filepath.Join(root, "new.txt"), "content": "x"})),
		agenttest.Reply(agenttest.Text("The word was PINEAPPLE.")),
	)
	env := agenttest.ClaudeEnv(t, mock, bin)
	first := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "remember the word PINEAPPLE", Dir: root, Env: env})
	if first.Err != nil || first.Session == "" {
		t.Fatalf("first run: %+v", first)
	}
	// The follow-up is read-only (ask) on the executor's conversation: its
	// Write is refused.
	second := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "what word did I ask you to remember?", Dir: root, Env: env, Resume: first.Session})
	if second.Err != nil || second.Session != first.Session || second.FinalText != "The word was PINEAPPLE." {
		t.Fatalf("second run: %+v", second)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
		t.Fatal("the resumed read-only run wrote a file")
	}
	reqs := mock.Agent()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "remember the word PINEAPPLE") || !strings.Contains(last, "I will remember PINEAPPLE.") {
		t.Fatalf("the follow-up request does not carry the earlier turn:\n%.2000s", last)
	}
	bogus := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "hi", Dir: root, Env: env, Resume: "11111111-2222-3333-4444-555555555555"})
	if !bogus.ResumeFailed || bogus.Err == nil || !strings.Contains(bogus.Summary, "cannot be continued") {
		t.Fatalf("unknown session: %+v", bogus)
	}
}

func TestCodexResumeE2E(t *testing.T) {
	bin := agenttest.CodexBin(t)
	root := agenttest.GitRepo(t, nil)
	mock := agenttest.NewOpenAI(t,
		agenttest.Reply(agenttest.Text("noted PINEAPPLE")),
		agenttest.Reply(agenttest.Exec("echo x > w.txt")),
		agenttest.Reply(agenttest.Text("it was PINEAPPLE")),
	)
	env := agenttest.CodexEnv(t, mock, bin)
	first := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Prompt: "remember the word PINEAPPLE", Dir: root, Env: env})
	if first.Err != nil || first.Session == "" {
		t.Fatalf("first run: %+v", first)
	}
	second := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleAsk, Prompt: "which word?", Dir: root, Env: env, Resume: first.Session})
	if second.Err != nil || second.Session != first.Session || second.FinalText != "it was PINEAPPLE" {
		t.Fatalf("second run: %+v", second)
	}
	if _, err := os.Stat(filepath.Join(root, "w.txt")); err == nil {
		t.Fatal("the resumed read-only run wrote a file: the sandbox was not applied")
	}
	reqs := mock.Requests()
	body := string(reqs[1].Body)
	if !strings.Contains(body, "remember the word PINEAPPLE") || !strings.Contains(body, "noted PINEAPPLE") {
		t.Fatalf("the follow-up request does not carry the earlier turn:\n%.2000s", body)
	}
	bogus := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleAsk, Prompt: "hi", Dir: root, Env: env, Resume: "11111111-2222-3333-4444-555555555555"})
	if !bogus.ResumeFailed || bogus.Err == nil || strings.Contains(bogus.Summary, "unknown>") {
		t.Fatalf("unknown thread: %+v", bogus)
	}
}
