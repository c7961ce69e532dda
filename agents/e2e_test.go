package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// End-to-end tests: the real claude / codex CLIs against the mock APIs.

func TestClaudePlannerE2E(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, map[string]string{"a.txt": "hello\n"})
	abs := func(n string) string { return filepath.Join(root, n) }
	mock := agenttest.NewAnthropic(t,
		// The planner tries every way of changing the repo; all must be refused.
		agenttest.Reply(agenttest.Thinking("Let me look at the repo."), agenttest.ToolUse("Write", map[string]any{"file_path": abs("new.txt"), "content": "x"})),
		agenttest.Reply(agenttest.ToolUse("Edit", map[string]any{"file_path": abs("a.txt"), "old_string": "hello", "new_string": "bye"})),
		agenttest.Reply(agenttest.Bash("touch "+abs("touched")+"; echo hi > "+abs("b.txt")+"; rm -f "+abs("a.txt"))),
		agenttest.Reply(agenttest.Bash("find "+root+" -name a.txt -delete")),
		agenttest.Reply(agenttest.Bash("sed -i s/hello/bye/ "+abs("a.txt"))),
		agenttest.Reply(agenttest.Bash("cat "+abs("a.txt")+" > "+abs("copy.txt"))),
		agenttest.Reply(agenttest.ToolUse("NotebookEdit", map[string]any{"notebook_path": abs("n.ipynb"), "new_source": "x"})),
		agenttest.Reply(agenttest.Thinking("Now the plan."), agenttest.Text("## Goal\nShip it.")),
	)
	before := agenttest.Snapshot(t, root)
	sess := filepath.Join(root, ".ai-session")
	var c collector
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "plan the work",
		Dir: root, SessionDir: sess, Env: agenttest.ClaudeEnv(t, mock, bin), OnActivity: c.add})
	if res.Err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v", res)
	}
	if after := agenttest.Snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("the planner changed the repo:\nbefore %v\nafter  %v", before, after)
	}
	if res.FinalText != "## Goal\nShip it." || res.Usage.CostUSD <= 0 || res.Session == "" {
		t.Fatalf("final text %q cost %v session %q", res.FinalText, res.Usage.CostUSD, res.Session)
	}
	if !strings.Contains(res.Summary, "ok") || strings.Contains(res.Summary, "\n") {
		t.Fatalf("summary %q", res.Summary)
	}
	if _, ok := c.find(events.ActThinking, func(a events.Activity) bool { return a.Text == "Let me look at the repo." }); !ok {
		t.Error("no thinking activity")
	}
	if _, ok := c.find(events.ActText, func(a events.Activity) bool { return strings.Contains(a.Text, "Ship it.") }); !ok {
		t.Error("no text activity")
	}
	for _, tool := range []string{"Write", "Edit", "Bash"} {
		if _, ok := c.find(events.ActTool, func(a events.Activity) bool { return a.Tool == tool }); !ok {
			t.Errorf("no %s tool activity", tool)
		}
	}
	if a, ok := c.find(events.ActToolResult, nil); !ok || !a.IsError {
		t.Errorf("the refused tool call should show as an error result: %+v", a)
	}
	if a, ok := c.find(events.ActDone, nil); !ok || a.StopReason == "" {
		t.Errorf("no done activity: %+v", a)
	}
	if _, ok := c.find(events.ActUsage, func(a events.Activity) bool { return a.Usage.CostUSD > 0 }); !ok {
		t.Error("no usage activity with a cost")
	}
	// The mock saw the prompt and the refusals.
	reqs := mock.Agent()
	if len(reqs) < 8 || !strings.Contains(string(reqs[0].Body), "plan the work") {
		t.Fatalf("mock saw %d agent requests", len(reqs))
	}
	log, _ := os.ReadFile(filepath.Join(sess, agents.CommandsLogName))
	if !strings.Contains(string(log), "START "+bin) && !strings.Contains(string(log), " START ") || !strings.Contains(string(log), "--- exit 0 ---") {
		t.Fatalf("commands.log:\n%.500s", log)
	}
}

func TestClaudeExecutorEditsE2E(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, map[string]string{"a.txt": "hello\n"})
	mock := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.ToolUse("Write", map[string]any{"file_path": filepath.Join(root, "new.txt"), "content": "written\n"})),
		agenttest.Reply(agenttest.Bash("echo hi > b.txt")),
		agenttest.Reply(agenttest.Text("done")),
	)
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "do it",
		Dir: root, Env: agenttest.ClaudeEnv(t, mock, bin)})
	if res.Err != nil {
		t.Fatalf("run: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(b) != "written\n" {
		t.Errorf("Write did not happen: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "b.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("Bash did not run: %q %v", b, err)
	}
}

func TestCodexExecutorE2E(t *testing.T) {
	bin := agenttest.CodexBin(t)
	root := agenttest.GitRepo(t, nil)
	mock := agenttest.NewOpenAI(t,
		agenttest.Reply(agenttest.Thinking("writing the file"), agenttest.Exec("echo hello > out.txt")),
		agenttest.Reply(agenttest.Text("wrote out.txt")),
	)
	var c collector
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Prompt: "write out.txt",
		Dir: root, SessionDir: filepath.Join(root, ".ai-session"), Env: agenttest.CodexEnv(t, mock, bin), OnActivity: c.add})
	if res.Err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	tool, ok := c.find(events.ActTool, func(a events.Activity) bool { return a.Detail == "echo hello > out.txt" })
	if !ok {
		t.Fatalf("no command activity in %+v", c.all())
	}
	if r, ok := c.find(events.ActToolResult, func(a events.Activity) bool { return a.ID == tool.ID }); !ok || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("no exit code for the command: %+v", r)
	}
	if res.FinalText != "wrote out.txt" || res.Session == "" || res.Usage.OutputTokens == 0 {
		t.Fatalf("result %+v", res)
	}
	if got := mock.Requests(); len(got) != 2 || !strings.Contains(string(got[1].Body), "function_call_output") {
		t.Fatalf("mock saw %d requests", len(got))
	}
}

func TestCodexReadOnlyE2E(t *testing.T) {
	bin := agenttest.CodexBin(t)
	root := agenttest.GitRepo(t, map[string]string{"a.txt": "hello\n"})
	mock := agenttest.NewOpenAI(t,
		agenttest.Reply(agenttest.Exec("echo hello > out.txt; rm a.txt")),
		agenttest.Reply(agenttest.Text("review done")),
	)
	before := agenttest.Snapshot(t, root)
	var c collector
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleReviewer, Prompt: "review",
		Dir: root, Env: agenttest.CodexEnv(t, mock, bin), OnActivity: c.add})
	if after := agenttest.Snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("the reviewer changed the repo: %v -> %v (result %+v)", before, after, res)
	}
	if res.Err != nil {
		t.Fatalf("run: %+v", res)
	}
}

func TestClaudeCancelE2E(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, nil)
	mock := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Bash("echo waiting && sleep 58.765 && echo done")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pgid int
	var c collector
	toolSeen := make(chan struct{}, 1)
	c.on = func(a events.Activity) {
		if a.Kind == events.ActTool && a.Tool == "Bash" {
			select {
			case toolSeen <- struct{}{}:
			default:
			}
		}
	}
	done := make(chan agents.Result, 1)
	go func() {
		done <- agents.Run(ctx, agents.Request{Agent: agents.Claude, Role: agents.RoleExecutor, Prompt: "sleep",
			Dir: root, Env: agenttest.ClaudeEnv(t, mock, bin), OnActivity: c.add, OnStart: func(pid int) { pgid = pid }})
	}()
	select {
	case <-toolSeen:
	case res := <-done:
		t.Fatalf("ended before the tool call: %+v", res)
	case <-time.After(60 * time.Second):
		t.Fatal("no Bash tool call within 60 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(groupAlive(t, -1, "58.765")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(groupAlive(t, -1, "58.765")) == 0 {
		t.Fatalf("the sleep never started: %+v", c.all())
	}
	t0 := time.Now()
	cancel()
	res := <-done
	if left := waitGone(t, pgid, "58.765", 2*time.Second-time.Since(t0)); len(left) > 0 {
		t.Fatalf("still running 2 s after cancel: %v", left)
	}
	if !res.Cancelled || !strings.Contains(res.Summary, "cancelled") {
		t.Fatalf("result %+v", res)
	}
	t.Logf("cancel -> all gone in %v", time.Since(t0))
}

func TestCodexStallTimeoutE2E(t *testing.T) {
	bin := agenttest.CodexBin(t)
	root := agenttest.GitRepo(t, nil)
	mock := agenttest.NewOpenAI(t, agenttest.Step{Stall: true})
	var pgid int
	t0 := time.Now()
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Prompt: "hang",
		Dir: root, Timeout: 1500 * time.Millisecond, Env: agenttest.CodexEnv(t, mock, bin), OnStart: func(pid int) { pgid = pid }})
	if !res.TimedOut || !strings.Contains(res.Summary, "timed out") || strings.Contains(res.Summary, "\n") {
		t.Fatalf("result %+v", res)
	}
	if d := time.Since(t0); d > 1500*time.Millisecond+agents.Grace+30*time.Second { // a hang guard: the mock stalls for good
		t.Fatalf("took %v", d)
	}
	if left := waitGone(t, pgid, "", 2*time.Second); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestClaudeHTTP500E2E(t *testing.T) {
	bin := agenttest.ClaudeBin(t)
	root := agenttest.GitRepo(t, nil)
	fail := agenttest.Step{Status: 500, Message: "mock overload"}
	steps := make([]agenttest.Step, 20)
	for i := range steps {
		steps[i] = fail
	}
	mock := agenttest.NewAnthropic(t, steps...)
	env := append(agenttest.ClaudeEnv(t, mock, bin), "CLAUDE_CODE_MAX_RETRIES=0")
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "x",
		Dir: root, Timeout: 50 * time.Second, Env: env})
	t.Logf("%d requests in %v", len(mock.Requests()), res.Duration)
	if res.Err == nil || res.TimedOut || strings.Contains(res.Summary, "\n") || !strings.Contains(res.Summary, "500") {
		t.Fatalf("result %+v", res)
	}
	t.Logf("summary: %s", res.Summary)
}

func TestCodexHTTP500E2E(t *testing.T) {
	bin := agenttest.CodexBin(t)
	root := agenttest.GitRepo(t, nil)
	mock := agenttest.NewOpenAI(t, agenttest.Step{Status: 500, Message: "mock overload"}, agenttest.Step{Status: 500, Message: "mock overload"})
	var c collector
	res := agents.Run(context.Background(), agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Prompt: "x",
		Dir: root, SessionDir: filepath.Join(root, ".ai-session"), Timeout: 50 * time.Second, Env: agenttest.CodexEnv(t, mock, bin), OnActivity: c.add})
	log, _ := os.ReadFile(filepath.Join(root, ".ai-session", agents.CommandsLogName))
	t.Logf("requests %d log:\n%s", len(mock.Requests()), log)
	if res.Err == nil || res.ExitCode == 0 || res.TimedOut || strings.Contains(res.Summary, "\n") {
		t.Fatalf("result %+v", res)
	}
	if _, ok := c.find(events.ActError, nil); !ok {
		t.Errorf("no error activity: %+v", c.all())
	}
	t.Logf("summary: %s", res.Summary)
}
