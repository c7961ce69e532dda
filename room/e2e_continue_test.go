package room

import (
	"encoding/json"
	"github.com/relay-baton/relay-baton/runs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/resume"
)

// The /continue loop with the real claude and codex CLIs against the mocks:
// codex changes the repository in each step (a shell command, then its
// answer), claude answers with the updated plan.

const e2ePlan = "## Goal\nWrite out.txt.\n\n## Steps\n1. Write one to out.txt\n2. Append two to out.txt\n\n## Verification\ncat out.txt\n\n## Next step\nWrite one to out.txt\n"

const e2ePlan2 = "## Goal\nWrite out.txt.\n\n## Steps\n1. Write one to out.txt [done]\n2. Append two to out.txt\n\n## Verification\ncat out.txt\n\n## Next step\nAppend two to out.txt (step-two marker)"

// agentWait bounds a wait that spans real agent runs (claude takes seconds
// even against the mock; the machine may be busy).
const agentWait = 90 * time.Second

// codexStep is one executor run: a shell command, then the final answer.
func codexStep(cmd, answer string) []agenttest.Step {
	return []agenttest.Step{agenttest.Reply(agenttest.Exec(cmd)), agenttest.Reply(agenttest.Text(answer))}
}

func continueSession(t *testing.T, a *agenttest.Anthropic, o *agenttest.OpenAI, args string) (*proc, string) {
	t.Helper()
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte(e2ePlan), 0o600)
	p := startOffline(t, dir, a, o)
	p.until(t, "claude› ")
	p.send(t, "/continue "+args+"\r")
	p.until(t, "this one confirmation covers them all")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	return p, dir
}

// ranAgents is the agents of the log's agent_run events that ran, in order.
func ranAgents(list []events.Event) string {
	var a []string
	for _, e := range list {
		if e.Kind == events.KindAgentRun && metaMap(e.Meta)["ran"] == true {
			a = append(a, metaMap(e.Meta)["agent"].(string))
		}
	}
	return strings.Join(a, ",")
}

// everyRunPreviewed checks that each agent_run that ran follows its own
// prompt_preview (same agent, command continue) with no other run between.
func everyRunPreviewed(t *testing.T, list []events.Event) int {
	t.Helper()
	var pending *events.Event
	n := 0
	for i := range list {
		e := &list[i]
		switch {
		case e.Kind == events.KindPromptPreview:
			pending = e
		case e.Kind == events.KindAgentRun && metaMap(e.Meta)["ran"] == true:
			if pending == nil || metaMap(pending.Meta)["agent"] != metaMap(e.Meta)["agent"] || metaMap(pending.Meta)["command"] != "continue" {
				t.Fatalf("agent_run %d (%v) without its own prompt_preview", n+1, metaMap(e.Meta)["agent"])
			}
			pending = nil
			n++
		}
	}
	return n
}

func TestE2EContinueTwoStepsExecutorPlannerExecutor(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text(e2ePlan2)))
	o := agenttest.NewOpenAI(t, append(codexStep("echo one > out.txt", "wrote out.txt; cat out.txt shows one"),
		codexStep("echo two >> out.txt", "appended two to out.txt")...)...)
	p, dir := continueSession(t, a, o, "--max-steps 2")
	p.untilWithin(t, "step 1 of 2: codex works on the plan's next step", agentWait)
	p.untilWithin(t, "step 1 of 2: claude updates the plan", agentWait)
	p.untilWithin(t, "claude updated .ai-session/plan.md after step 1", agentWait)
	p.untilWithin(t, "step 2 of 2: codex works on the plan's next step", agentWait)
	p.untilWithin(t, "/continue stopped after 2 of 2 steps: max steps", agentWait)
	p.until(t, "claude› ")
	p.send(t, "/replay --kind prompt_preview\r")
	p.until(t, "3 events; roles {")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)

	if b, _ := os.ReadFile(runFile(t, dir, "out.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("out.txt %q", b)
	}
	if !strings.Contains(p.String(), "at most 3 agent runs (2 codex, 1 claude)") {
		t.Fatal("the preview does not show the loop's shape")
	}
	list := readLog(t, dir)
	if got := ranAgents(list); got != "codex,claude,codex" {
		t.Fatalf("agent_run order %s", got)
	}
	if n := everyRunPreviewed(t, list); n != 3 {
		t.Fatalf("%d runs", n)
	}
	// Replay showed the three previews, in run order.
	screen := p.String()
	i1 := strings.Index(screen, "codex executor /continue: \"You are the executor in a relay-baton session, in step 1")
	i2 := strings.Index(screen, "claude planner /continue: \"You are the planner in a relay-baton session. Step 1")
	i3 := strings.Index(screen, "codex executor /continue: \"You are the executor in a relay-baton session, in step 2")
	if i1 < 0 || i2 < i1 || i3 < i2 {
		t.Fatalf("replay does not show the three previews in order (%d %d %d):\n%s", i1, i2, i3, screen)
	}
	// plan.md changed between the steps: step 2's codex got claude's plan,
	// the old one is the backup.
	b, _ := os.ReadFile(filepath.Join(dir, ".ai-session", "plan.md"))
	if string(b) != e2ePlan2+"\n" {
		t.Fatalf("plan.md %q", b)
	}
	var backup string
	for _, e := range list {
		if e.Kind == events.KindPlan {
			backup = e.Refs["backup"]
		}
	}
	if old, _ := os.ReadFile(filepath.Join(dir, ".ai-session", backup)); backup == "" || string(old) != e2ePlan {
		t.Fatalf("backup %q: %q", backup, old)
	}
	reqs := o.Requests()
	if len(reqs) < 3 || strings.Contains(string(reqs[0].Body), "step-two marker") || !strings.Contains(string(reqs[len(reqs)-1].Body), "step-two marker") {
		t.Fatalf("codex's step 2 did not get the updated plan (%d requests)", len(reqs))
	}
	// Claude's prompt held codex's answer and the step's diff.
	var planner string
	for _, r := range a.Agent() {
		planner += agenttest.LastUserText(r)
	}
	for _, s := range []string{"wrote out.txt; cat out.txt shows one", "+one", "A out.txt"} {
		if !strings.Contains(planner, s) {
			t.Fatalf("claude's prompt lacks %q:\n%s", s, planner)
		}
	}
}

func TestE2EContinuePlanCompleteEndsEarly(t *testing.T) {
	// Claude first answers with an updated plan, then, after step 2, with
	// the plan marked done and the completion marker: the loop of up to 3
	// steps ends after 2.
	done := strings.ReplaceAll(e2ePlan2, "2. Append two to out.txt", "2. Append two to out.txt [done]")
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text(e2ePlan2)), agenttest.Reply(agenttest.Text(done+"\n\nPLAN COMPLETE")))
	o := agenttest.NewOpenAI(t, append(codexStep("echo one > out.txt", "wrote one"),
		codexStep("echo two >> out.txt", "appended two; cat out.txt shows both lines")...)...)
	p, dir := continueSession(t, a, o, "--max-steps 3")
	p.untilWithin(t, "claude updated .ai-session/plan.md after step 1", agentWait)
	p.untilWithin(t, "claude updated .ai-session/plan.md and declared the plan complete after step 2", agentWait)
	p.untilWithin(t, "/continue stopped after 2 of 3 steps: plan complete (claude declared the plan complete after step 2)", agentWait)
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if !strings.Contains(p.String(), "at most 5 agent runs (3 codex, 2 claude)") {
		t.Fatal("the preview does not show the loop's shape")
	}
	list := readLog(t, dir)
	if got := ranAgents(list); got != "codex,claude,codex,claude" {
		t.Fatalf("agent_run order %s", got)
	}
	if n := everyRunPreviewed(t, list); n != 4 {
		t.Fatalf("%d runs", n)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".ai-session", "plan.md"))
	if string(b) != done+"\n" {
		t.Fatalf("plan.md %q", b)
	}
	var plans []string
	for _, e := range list {
		if e.Kind == events.KindPlan {
			plans = append(plans, e.Text)
			if metaMap(e.Meta)["written"] != true || e.Refs["backup"] == "" {
				t.Fatalf("plan event %+v", e)
			}
		}
	}
	if len(plans) != 2 || !strings.Contains(plans[1], "plan complete") {
		t.Fatalf("plan events %q", plans)
	}
	last := list[len(list)-1]
	if metaMap(last.Meta)["stopReason"] != string(resume.StopComplete) || metaMap(last.Meta)["half"] != "plan" {
		t.Fatalf("last event %+v", last)
	}
}

func TestE2EContinueStopsOnNoProgress(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text(e2ePlan2)))
	o := agenttest.NewOpenAI(t, append(codexStep("echo one > out.txt", "wrote out.txt"),
		codexStep("echo one > out.txt", "wrote out.txt again")...)...)
	p, dir := continueSession(t, a, o, "--max-steps 3")
	p.untilWithin(t, "/continue stopped after 2 of 3 steps: no progress", agentWait)
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if b, _ := os.ReadFile(runFile(t, dir, "out.txt")); string(b) != "one\n" {
		t.Fatalf("out.txt %q", b)
	}
	if got := ranAgents(readLog(t, dir)); got != "codex,claude,codex" {
		t.Fatalf("agent_run order %s", got)
	}
}

func TestE2EContinueStopsOnFailure(t *testing.T) {
	o := agenttest.NewOpenAI(t, agenttest.Step{Status: 500, Message: "mock failure"})
	p, dir := continueSession(t, nil, o, "--max-steps 3")
	p.untilWithin(t, "/continue stopped after 1 of 3 steps: agent failure", agentWait)
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	list := readLog(t, dir)
	last := list[len(list)-1]
	b, _ := json.Marshal(last.Meta)
	if metaMap(last.Meta)["stopReason"] != string(resume.StopFailure) || metaMap(last.Meta)["half"] != "execute" {
		t.Fatalf("last event %s", b)
	}
}

func TestE2EOneShotContinue(t *testing.T) {
	bin, _ := binaries(t)
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text(e2ePlan2)))
	o := agenttest.NewOpenAI(t, append(codexStep("echo one > out.txt", "wrote out.txt"),
		codexStep("echo two >> out.txt", "appended two")...)...)
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	os.WriteFile(filepath.Join(dir, ".ai-session", "plan.md"), []byte(e2ePlan), 0o600)
	cmd := exec.Command(bin, "continue", "--yes", "--json", "--max-steps", "2", "--path", dir)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), agenttest.OfflineEnv(t, a, o)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var lr LoopResult
	if err := json.Unmarshal([]byte(stdout.String()), &lr); err != nil {
		t.Fatalf("stdout is not the loop's JSON: %v\n%s", err, stdout.String())
	}
	if lr.Reason != resume.StopMaxSteps || lr.Steps != 2 || lr.AgentRuns != 3 || lr.PlanUpdates != 1 {
		t.Fatalf("%+v", lr)
	}
	if !strings.Contains(stderr.String(), "at most 3 agent runs (2 codex, 1 claude)") {
		t.Fatalf("stderr lacks the loop's preview:\n%s", stderr.String())
	}
	list := readLog(t, dir)
	if got := ranAgents(list); got != "codex,claude,codex" {
		t.Fatalf("agent_run order %s", got)
	}
	everyRunPreviewed(t, list)
	if list[0].Kind != events.KindCommand || metaMap(list[0].Meta)["command"] != "continue" || list[0].Text != "continue --max-steps 2" {
		t.Fatalf("first event %+v", list[0])
	}
	if b, _ := os.ReadFile(runFile(t, dir, "out.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("out.txt %q", b)
	}
}

// runFile is name in the worktree of dir's pending run (the loop's codex
// works there), after checking that the user's tree has no such file.
func runFile(t *testing.T, dir, name string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
		t.Fatalf("%s was written in the user's tree, not the run's worktree", name)
	}
	r := runs.Latest(dir, runs.Pending)
	if r == nil {
		t.Fatalf("no pending run for %s", dir)
	}
	return filepath.Join(r.Worktree, name)
}
