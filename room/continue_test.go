package room

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/resume"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/prompts"
)

// stepPlan is the plan a scripted planner answers after step n.
func stepPlan(n int) string {
	return fmt.Sprintf("## Goal\nWrite f.txt.\n## Scope (in)\nf.txt\n## Out of scope\nnone\n## Approach\nsmall\n## Steps\n1. Edit f.txt [done after %d]\n2. More\n## Risks\nnone\n## Verification\ncat f.txt\n## Next step\nwork %d", n, n+1)
}

// loopScript drives the fake runner like a loop: exec answers the
// executor's turns (step counts from 1), plan the planner's (nil: the
// updated plan stepPlan(step)).
func loopScript(t *testing.T, h *harness, exec, plan func(ctx context.Context, step int, r agents.Request) agents.Result) {
	t.Helper()
	execs, plans := 0, 0
	h.fr.run = func(ctx context.Context, _ int, r agents.Request) agents.Result {
		switch {
		case r.Agent == agents.Codex && r.Role == agents.RoleExecutor:
			execs++
			return exec(ctx, execs, r)
		case r.Agent == agents.Claude && r.Role == agents.RolePlanner:
			plans++
			if plan == nil {
				return agents.Result{FinalText: stepPlan(plans)}
			}
			return plan(ctx, plans, r)
		}
		t.Errorf("unexpected run %s %s", r.Agent, r.Role)
		return agents.Result{ExitCode: 1}
	}
}

func writeStep(h *harness) func(context.Context, int, agents.Request) agents.Result {
	return func(_ context.Context, i int, _ agents.Request) agents.Result {
		touch(h.dir, "f.txt", fmt.Sprint("step ", i, "\n"))
		return agents.Result{FinalText: fmt.Sprintf("changed f.txt (step %d); go test passed", i)}
	}
}

// agentOrder is the agents of the log's agent_run events that ran.
func agentOrder(list []events.Event) string {
	var a []string
	for _, e := range list {
		if e.Kind == events.KindAgentRun && metaMap(e.Meta)["ran"] == true {
			a = append(a, metaMap(e.Meta)["agent"].(string))
		}
	}
	return strings.Join(a, ",")
}

// previewsBeforeRuns checks that every agent_run that ran follows a
// prompt_preview of the same agent holding exactly the prompt it ran with.
func previewsBeforeRuns(t *testing.T, list []events.Event, ran []agents.Request) {
	t.Helper()
	var pending *events.Event
	n := 0
	for i := range list {
		e := &list[i]
		switch e.Kind {
		case events.KindPromptPreview:
			pending = e
		case events.KindAgentRun:
			if metaMap(e.Meta)["ran"] != true {
				continue
			}
			if pending == nil || metaMap(pending.Meta)["agent"] != metaMap(e.Meta)["agent"] {
				t.Fatalf("agent_run %d (%s) has no prompt_preview of its own before it", n+1, metaMap(e.Meta)["agent"])
			}
			if n >= len(ran) || metaMap(pending.Meta)["prompt"] != ran[n].Prompt {
				t.Fatalf("the preview before run %d does not hold the prompt that ran", n+1)
			}
			pending = nil
			n++
		}
	}
	if n != len(ran) {
		t.Fatalf("%d agent_run events, %d runs", n, len(ran))
	}
}

func TestContinueRunsExecutorThenPlanner(t *testing.T) {
	h := newHarness(t, "y")
	writePlan(t, h, fullPlan)
	// An uncommitted change from before the loop is not the step's diff.
	touch(h.dir, "old.txt", "edited before the loop\n")
	loopScript(t, h, writeStep(h), nil)
	lr, err := h.e.Continue(context.Background(), 3)
	if err != nil || lr.Reason != resume.StopMaxSteps || lr.Steps != 3 || lr.AgentRuns != 5 || lr.PlanUpdates != 2 {
		t.Fatalf("%+v %v\n%s", lr, err, h.out)
	}
	list := h.events(t)
	if got := agentOrder(list); got != "codex,claude,codex,claude,codex" {
		t.Fatalf("agent order %s", got)
	}
	previewsBeforeRuns(t, list, h.fr.ran)
	if h.term.asked != 1 {
		t.Fatalf("asked %d times, want one confirmation for the loop", h.term.asked)
	}
	out := h.out.String()
	for _, s := range []string{"at most 5 agent runs (3 codex, 2 claude)", "steps 1-2: codex (executor) works on the plan's next step, then claude (planner)",
		"step 3: codex only", "PLAN COMPLETE", "/continue stopped after 3 of 3 steps: max steps"} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
	// The planner saw step 1's answer and that step's diff only.
	p := h.fr.ran[1].Prompt
	if !strings.Contains(p, "changed f.txt (step 1); go test passed") || !strings.Contains(p, "+step 1") || !strings.Contains(p, "A f.txt") {
		t.Fatalf("planner prompt lacks the step's outcome:\n%s", p)
	}
	if strings.Contains(p, "edited before the loop") {
		t.Fatalf("planner prompt holds a change from before the step:\n%s", p)
	}
	// Step 2's planner sees step 2's change (f.txt edited), not step 1's creation.
	if p := h.fr.ran[3].Prompt; !strings.Contains(p, "M f.txt") || !strings.Contains(p, "-step 1") || !strings.Contains(p, "+step 2") {
		t.Fatalf("step 2 planner prompt:\n%s", p)
	}
	// The executor of step 2 works on the updated plan, with step 1's outcome.
	if p := h.fr.ran[2].Prompt; !strings.Contains(p, "work 2") || !strings.Contains(p, "step 1: exit 0; 2 changed files") {
		t.Fatalf("step 2 executor prompt:\n%s", p)
	}
	b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "plan.md"))
	if string(b) != stepPlan(2)+"\n" {
		t.Fatalf("plan.md %q", b)
	}
	// Each update backed up the plan it replaced and logged a plan event.
	var backups []string
	for _, e := range list {
		if e.Kind == events.KindPlan {
			if metaMap(e.Meta)["written"] != true || e.Refs["backup"] == "" {
				t.Fatalf("plan event %+v", e)
			}
			backups = append(backups, e.Refs["backup"])
		}
	}
	if len(backups) != 2 || backups[0] == backups[1] {
		t.Fatalf("backups %v", backups)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, backups[0])); string(b) != fullPlan {
		t.Fatalf("first backup %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, backups[1])); string(b) != stepPlan(1)+"\n" {
		t.Fatalf("second backup %q", b)
	}
	// Replay lists a preview for every run.
	var rb strings.Builder
	if err := replay.Run(context.Background(), &rb, replay.Options{File: h.e.LogPath(), Kinds: []string{string(events.KindPromptPreview)}}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rb.String(), " prompt_preview: "); n != 5 {
		t.Fatalf("replay shows %d previews, want 5:\n%s", n, rb.String())
	}
}

func TestContinueStopReasons(t *testing.T) {
	planDone := func(_ context.Context, i int, _ agents.Request) agents.Result {
		return agents.Result{FinalText: stepPlan(i) + "\n\n" + prompts.PlanCompleteMarker + "\n"}
	}
	tests := []struct {
		name       string
		max        int
		diet       string
		answer     string
		exec, plan func(h *harness) func(context.Context, int, agents.Request) agents.Result
		wantOrder  string
		want       resume.StopReason
		wantHalf   string
		wantErr    bool
		wantPlan   string // plan.md afterwards ("" = unchanged)
	}{
		{name: "max steps", max: 2, exec: writeStep, wantOrder: "codex,claude,codex", want: resume.StopMaxSteps, wantHalf: resume.HalfExecute, wantPlan: stepPlan(1)},
		{name: "plan complete", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result { return planDone },
			wantOrder: "codex,claude", want: resume.StopComplete, wantHalf: resume.HalfPlan, wantPlan: stepPlan(1)},
		{name: "plan complete, marker only", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result {
				return agents.Result{FinalText: "PLAN COMPLETE"}
			}
		}, wantOrder: "codex,claude", want: resume.StopComplete, wantHalf: resume.HalfPlan},
		{name: "a marker not on the last line does not end it", max: 2, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(_ context.Context, i int, _ agents.Request) agents.Result {
				return agents.Result{FinalText: stepPlan(i) + "\nPLAN COMPLETE\n(not yet)"}
			}
		}, wantOrder: "codex,claude,codex", want: resume.StopMaxSteps, wantHalf: resume.HalfExecute, wantPlan: stepPlan(1) + "\nPLAN COMPLETE\n(not yet)"},
		{name: "no progress in step 1 (baseline)", max: 5, exec: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result {
				return agents.Result{FinalText: "nothing to do"}
			}
		}, wantOrder: "codex", want: resume.StopNoProgress, wantHalf: resume.HalfExecute},
		{name: "no progress later", max: 5, exec: func(h *harness) func(context.Context, int, agents.Request) agents.Result {
			return func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "f.txt", "same every step")
				return agents.Result{}
			}
		}, wantOrder: "codex,claude,codex", want: resume.StopNoProgress, wantHalf: resume.HalfExecute, wantPlan: stepPlan(1)},
		{name: "executor failure", max: 5, exec: func(h *harness) func(context.Context, int, agents.Request) agents.Result {
			return func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "f.txt", fmt.Sprint(i))
				if i == 2 {
					return agents.Result{ExitCode: 1, Err: errors.New("exit status 1")}
				}
				return agents.Result{}
			}
		}, wantOrder: "codex,claude,codex", want: resume.StopFailure, wantHalf: resume.HalfExecute, wantErr: true, wantPlan: stepPlan(1)},
		{name: "planner failure", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result {
				return agents.Result{ExitCode: 1, Err: errors.New("exit status 1")}
			}
		}, wantOrder: "codex,claude", want: resume.StopFailure, wantHalf: resume.HalfPlan, wantErr: true},
		{name: "planner answers no plan", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result {
				return agents.Result{FinalText: "I could not read the diff."}
			}
		}, wantOrder: "codex,claude", want: resume.StopFailure, wantHalf: resume.HalfPlan, wantErr: true},
		{name: "planner answers nothing", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result { return agents.Result{FinalText: "  \n"} }
		}, wantOrder: "codex,claude", want: resume.StopFailure, wantHalf: resume.HalfPlan, wantErr: true},
		{name: "executor cancelled", max: 5, exec: func(h *harness) func(context.Context, int, agents.Request) agents.Result {
			return func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "f.txt", fmt.Sprint(i))
				return agents.Result{ExitCode: -1, Cancelled: true}
			}
		}, wantOrder: "codex", want: resume.StopCancelled, wantHalf: resume.HalfExecute, wantErr: true},
		{name: "planner cancelled", max: 5, exec: writeStep, plan: func(*harness) func(context.Context, int, agents.Request) agents.Result {
			return func(context.Context, int, agents.Request) agents.Result {
				return agents.Result{ExitCode: -1, Cancelled: true}
			}
		}, wantOrder: "codex,claude", want: resume.StopCancelled, wantHalf: resume.HalfPlan, wantErr: true},
		{name: "budget", max: 5, diet: "ultra", exec: func(h *harness) func(context.Context, int, agents.Request) agents.Result {
			return func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "big.txt", strings.Repeat(fmt.Sprintf("line %d\n", i), 3000))
				return agents.Result{}
			}
		}, wantOrder: "codex", want: resume.StopBudget, wantHalf: resume.HalfExecute},
		{name: "declined", max: 3, answer: "n", exec: writeStep, wantOrder: "", want: resume.StopDeclined, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answer := "y"
			if tc.answer != "" {
				answer = tc.answer
			}
			h := newHarness(t, answer)
			if tc.diet != "" {
				h.e.Diet = tc.diet
			}
			writePlan(t, h, fullPlan)
			var plan func(context.Context, int, agents.Request) agents.Result
			if tc.plan != nil {
				plan = tc.plan(h)
			}
			loopScript(t, h, tc.exec(h), plan)
			lr, err := h.e.Continue(context.Background(), tc.max)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v\n%s", err, h.out)
			}
			list := h.events(t)
			if lr.Reason != tc.want || agentOrder(list) != tc.wantOrder {
				t.Fatalf("reason %q after %s (%+v), want %q after %s\n%s", lr.Reason, agentOrder(list), lr, tc.want, tc.wantOrder, h.out)
			}
			if h.term.asked != 1 {
				t.Fatalf("asked %d times, want one confirmation", h.term.asked)
			}
			b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "plan.md"))
			want := fullPlan
			if tc.wantPlan != "" {
				want = tc.wantPlan + "\n"
			}
			if string(b) != want {
				t.Fatalf("plan.md %q, want %q", b, want)
			}
			if tc.want == resume.StopDeclined {
				return
			}
			previewsBeforeRuns(t, list, h.fr.ran)
			if !strings.Contains(h.out.String(), fmt.Sprintf("/continue stopped after %d of %d steps: %s", lr.Steps, tc.max, tc.want)) {
				t.Fatalf("no stop message:\n%s", h.out)
			}
			last := list[len(list)-1]
			if last.Kind != events.KindExecute || metaMap(last.Meta)["stopReason"] != string(tc.want) || metaMap(last.Meta)["half"] != tc.wantHalf {
				t.Fatalf("last event %+v, want the stop (%s, half %s)", last, tc.want, tc.wantHalf)
			}
		})
	}
}

func TestContinueCtrlCStopsLoop(t *testing.T) {
	for _, during := range []string{resume.HalfExecute, resume.HalfPlan} {
		t.Run(during, func(t *testing.T) {
			h := newHarness(t, "y")
			writePlan(t, h, fullPlan)
			ctx, cancel := context.WithCancel(context.Background())
			ctrlC := func(c context.Context) agents.Result {
				cancel()
				<-c.Done()
				return agents.Result{ExitCode: -1, Cancelled: true}
			}
			loopScript(t, h, func(c context.Context, i int, r agents.Request) agents.Result {
				touch(h.dir, "f.txt", fmt.Sprint(i))
				if during == resume.HalfExecute {
					return ctrlC(c)
				}
				return agents.Result{}
			}, func(c context.Context, i int, r agents.Request) agents.Result { return ctrlC(c) })
			lr, err := h.e.Continue(ctx, 3)
			wantRuns := map[string]int{resume.HalfExecute: 1, resume.HalfPlan: 2}[during]
			if err == nil || lr.Reason != resume.StopCancelled || h.fr.runs() != wantRuns || lr.Half != during {
				t.Fatalf("%+v %v runs %d", lr, err, h.fr.runs())
			}
			list := h.events(t)
			last := list[len(list)-1]
			if last.Kind != events.KindExecute || metaMap(last.Meta)["stopReason"] != "cancelled" || metaMap(last.Meta)["half"] != during {
				t.Fatalf("last event %+v", last)
			}
			var run events.Event
			for _, e := range list {
				if e.Kind == events.KindAgentRun {
					run = e
				}
			}
			if metaMap(run.Meta)["cancelled"] != true {
				t.Fatalf("agent_run %s", run.Meta)
			}
		})
	}
}

func TestLoopShape(t *testing.T) {
	tests := []struct {
		at         loopStart
		max        int
		runs, x, p int
		order      []string
	}{
		{loopStart{Step: 1, Half: resume.HalfExecute}, 1, 1, 1, 0, []string{"step 1: codex only"}},
		{loopStart{Step: 1, Half: resume.HalfExecute}, 2, 3, 2, 1, []string{"step 1: codex (executor)", "step 2: codex only"}},
		{loopStart{Step: 1, Half: resume.HalfExecute}, 20, 39, 20, 19, []string{"steps 1-19: codex", "step 20: codex only"}},
		{loopStart{Step: 2, Half: resume.HalfPlan}, 4, 4, 2, 2, []string{"step 2: claude (planner)", "step 3: codex (executor)", "step 4: codex only"}},
		{loopStart{Step: 3, Half: resume.HalfPlan}, 4, 2, 1, 1, []string{"step 3: claude (planner)", "step 4: codex only"}},
		{loopStart{Step: 4, Half: resume.HalfExecute}, 4, 1, 1, 0, []string{"step 4: codex only"}},
	}
	for _, tc := range tests {
		order, runs, x, p := loopShape(tc.at, tc.max, "codex", "claude")
		if runs != tc.runs || x != tc.x || p != tc.p {
			t.Errorf("%+v max %d: %d runs (%d, %d), want %d (%d, %d)", tc.at, tc.max, runs, x, p, tc.runs, tc.x, tc.p)
		}
		lines := strings.Split(order, "\n")
		if len(lines) != len(tc.order) {
			t.Errorf("%+v max %d: order %q", tc.at, tc.max, order)
			continue
		}
		for i, l := range lines {
			if !strings.HasPrefix(strings.TrimSpace(l), tc.order[i]) {
				t.Errorf("%+v max %d: line %d %q, want %q…", tc.at, tc.max, i, l, tc.order[i])
			}
		}
	}
}

// cutLog keeps the log's events up to and including the first one match
// accepts after skip earlier matches, as if the room died right there.
func cutLog(t *testing.T, path string, list []events.Event, match func(events.Event) bool, skip int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, e := range list {
		if match(e) {
			if skip > 0 {
				skip--
				continue
			}
			if err := os.WriteFile(path, []byte(strings.Join(lines[:i+1], "")), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no event to cut the log at")
}

func TestResumeLoopAtEachHalf(t *testing.T) {
	// A whole 3-step loop, then the log cut where the room could have
	// died: the resume offers the half of the step that did not finish.
	src := newHarness(t, "y")
	writePlan(t, src, fullPlan)
	loopScript(t, src, writeStep(src), nil)
	if _, err := src.e.Process(context.Background(), "/continue --max-steps 3"); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(src.e.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	list := src.events(t)
	isKind := func(k events.Kind, agent string) func(events.Event) bool {
		return func(e events.Event) bool { return e.Kind == k && (agent == "" || metaMap(e.Meta)["agent"] == agent) }
	}
	stepEvent := func(half string) func(events.Event) bool {
		return func(e events.Event) bool {
			_, step := metaMap(e.Meta)["step"]
			return e.Kind == events.KindExecute && step && metaMap(e.Meta)["half"] == half
		}
	}
	tests := []struct {
		name   string
		match  func(events.Event) bool
		skip   int
		from   int
		half   string
		first  string // the agent the resumed loop runs first
		finish string // the agents of the resumed loop
	}{
		{"during step 1's executor", isKind(events.KindAgentRun, "codex"), 0, 1, resume.HalfExecute, "codex", "codex,claude,codex,claude,codex"},
		{"after step 1's executor", stepEvent(resume.HalfExecute), 0, 1, resume.HalfPlan, "claude", "claude,codex,claude,codex"},
		{"during step 1's plan update", isKind(events.KindAgentRun, "claude"), 0, 1, resume.HalfPlan, "claude", "claude,codex,claude,codex"},
		{"after step 1's plan update", isKind(events.KindPlan, ""), 0, 2, resume.HalfExecute, "codex", "codex,claude,codex"},
		{"after step 2's executor", stepEvent(resume.HalfExecute), 1, 2, resume.HalfPlan, "claude", "claude,codex"},
		{"after step 2's plan update", isKind(events.KindPlan, ""), 1, 3, resume.HalfExecute, "codex", "codex"},
		{"after the last step's executor", stepEvent(resume.HalfExecute), 2, 0, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "y")
			writePlan(t, h, fullPlan)
			if err := os.WriteFile(h.e.LogPath(), full, 0o600); err != nil {
				t.Fatal(err)
			}
			cutLog(t, h.e.LogPath(), list, tc.match, tc.skip)
			rs, err := resume.Read(h.e.LogPath(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.from == 0 {
				if rs.Loop != nil {
					t.Fatalf("a loop with only its last step's plan update left is offered: %+v", rs.Loop)
				}
				return
			}
			if rs.Loop == nil || rs.Loop.From != tc.from || rs.Loop.Half != tc.half || rs.Loop.Max != 3 {
				t.Fatalf("loop %+v, want step %d %s of 3", rs.Loop, tc.from, tc.half)
			}
			if tc.half == resume.HalfPlan && !strings.Contains(rs.Loop.Answer, fmt.Sprintf("changed f.txt (step %d)", tc.from)) {
				t.Fatalf("the planner half lacks its step's answer: %+v", rs.Loop)
			}
			// The repository as that step left it, and the resumed loop.
			touch(h.dir, "f.txt", fmt.Sprint("step ", tc.from, "\n"))
			loopScript(t, h, func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "f.txt", fmt.Sprint("resumed ", i, "\n"))
				return agents.Result{FinalText: "did it"}
			}, nil)
			if _, err := h.e.Resume(context.Background(), 0); err != nil {
				t.Fatalf("%v\n%s", err, h.out)
			}
			if h.fr.ran[0].Agent != tc.first {
				t.Fatalf("resumed with %s, want %s", h.fr.ran[0].Agent, tc.first)
			}
			if tc.half == resume.HalfPlan {
				p := h.fr.ran[0].Prompt
				if !strings.Contains(p, fmt.Sprintf("Step %d of at most 3", tc.from)) || !strings.Contains(p, fmt.Sprintf("changed f.txt (step %d)", tc.from)) ||
					!strings.Contains(p, "The step's own diff is not available") {
					t.Fatalf("resumed planner prompt:\n%s", p)
				}
				if !strings.Contains(h.out.String(), "(claude's plan update)") {
					t.Fatalf("the preview does not say the loop resumes with the plan update:\n%s", h.out)
				}
				// The executor after it gets that step's outcome, as logged,
				// and the plan the resumed planner wrote (its first update).
				if p := h.fr.ran[1].Prompt; !strings.Contains(p, fmt.Sprintf("continue step %d/3 by codex", tc.from)) || !strings.Contains(p, "## Next step\nwork 2") {
					t.Fatalf("the executor after the resumed plan update:\n%s", p)
				}
			}
			var got []string
			for _, r := range h.fr.ran {
				got = append(got, r.Agent)
			}
			if strings.Join(got, ",") != tc.finish {
				t.Fatalf("resumed loop ran %v, want %s\n%s", got, tc.finish, h.out)
			}
			if !strings.Contains(h.out.String(), "/continue stopped after 3 of 3 steps: max steps") {
				t.Fatalf("output:\n%s", h.out)
			}
			// Finished: nothing more to offer.
			if rs, err := resume.Read(h.e.LogPath(), 0); err != nil || rs.Loop != nil {
				t.Fatalf("after the resumed loop: %+v %v", rs.Loop, err)
			}
			// Had the room died right after the resumed loop's confirmation,
			// the same half would be offered again.
			resumed := h.events(t)
			offered := false
			cutLog(t, h.e.LogPath(), resumed, func(e events.Event) bool {
				if _, ok := metaMap(e.Meta)["loopResumeFrom"]; ok {
					offered = true
				}
				return offered && e.Kind == events.KindCommand && metaMap(e.Meta)["confirmed"] == true
			}, 0)
			if rs, err := resume.Read(h.e.LogPath(), 0); err != nil || rs.Loop == nil || rs.Loop.From != tc.from || rs.Loop.Half != tc.half {
				t.Fatalf("a resumed loop that died at once: %+v %v", rs.Loop, err)
			}
		})
	}
}

func TestResumeLoopAfterStopInAHalf(t *testing.T) {
	for _, half := range []string{resume.HalfExecute, resume.HalfPlan} {
		t.Run(half, func(t *testing.T) {
			h := newHarness(t, "y", "y")
			writePlan(t, h, fullPlan)
			failed := false
			fail := func() (agents.Result, bool) {
				if failed {
					return agents.Result{}, false
				}
				failed = true
				return agents.Result{ExitCode: 1, Err: errors.New("exit status 1")}, true
			}
			loopScript(t, h, func(_ context.Context, i int, _ agents.Request) agents.Result {
				touch(h.dir, "f.txt", fmt.Sprint("step ", i, "\n"))
				if half == resume.HalfExecute && i == 2 {
					if r, ok := fail(); ok {
						return r
					}
				}
				return agents.Result{FinalText: fmt.Sprintf("changed f.txt (run %d)", i)}
			}, func(_ context.Context, i int, _ agents.Request) agents.Result {
				if half == resume.HalfPlan && i == 2 {
					if r, ok := fail(); ok {
						return r
					}
				}
				return agents.Result{FinalText: stepPlan(i)}
			})
			if lr, err := h.e.Continue(context.Background(), 3); err == nil || lr.Reason != resume.StopFailure || lr.Steps != 2 || lr.Half != half {
				t.Fatalf("%+v %v", lr, err)
			}
			rs, err := resume.Read(h.e.LogPath(), 0)
			if err != nil || rs.Loop == nil || rs.Loop.From != 2 || rs.Loop.Half != half || rs.Loop.Reason != string(resume.StopFailure) {
				t.Fatalf("loop %+v %v", rs.Loop, err)
			}
			before := len(h.fr.ran)
			if _, err := h.e.Resume(context.Background(), 0); err != nil {
				t.Fatalf("%v\n%s", err, h.out)
			}
			var got []string
			for _, r := range h.fr.ran[before:] {
				got = append(got, r.Agent)
			}
			want := map[string][]string{resume.HalfExecute: {"codex", "claude", "codex"}, resume.HalfPlan: {"claude", "codex"}}[half]
			if !slices.Equal(got, want) {
				t.Fatalf("resumed loop ran %v, want %v\n%s", got, want, h.out)
			}
		})
	}
}

func TestBackupPlanNeverOverwrites(t *testing.T) {
	h := newHarness(t)
	a, err := newLoop(h.e).backupPlan("one")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newLoop(h.e).backupPlan("two") // the same clock: another name
	if err != nil || a == b {
		t.Fatalf("%q %q %v", a, b, err)
	}
	// A symlink in the way is not written through.
	target := filepath.Join(t.TempDir(), "target")
	link := filepath.Join(h.e.SessionDir, "plan."+tsName(h.e.now())+"-2.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c, err := newLoop(h.e).backupPlan("three")
	if err != nil || c == filepath.Base(link) {
		t.Fatalf("%q %v", c, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the backup was written through a symlink")
	}
	for name, want := range map[string]string{a: "one", b: "two", c: "three"} {
		if got, _ := os.ReadFile(filepath.Join(h.e.SessionDir, name)); string(got) != want {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestNextStep(t *testing.T) {
	if got := nextStep(stepPlan(1)); got != "work 2" {
		t.Fatalf("%q", got)
	}
	if got := nextStep("## Next step\n\nrun it\n\n## Notes\nx"); got != "run it" {
		t.Fatalf("%q", got)
	}
	if got := nextStep("## Goal\nx"); got != "" {
		t.Fatalf("%q", got)
	}
}

func TestContinueRefusesAFIFOPlan(t *testing.T) {
	h := newHarness(t, "y")
	testkit.MakeFIFO(t, filepath.Join(h.e.SessionDir, "plan.md"))
	done := make(chan error, 1)
	go func() { _, err := h.e.Continue(context.Background(), 2); done <- err }()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, ErrNoPlan) || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(time.Minute): // a hang guard: open(2) on a FIFO never returns
		t.Fatal("/continue blocked on a FIFO plan.md")
	}
	if h.fr.runs() != 0 || h.term.asked != 0 {
		t.Fatalf("runs %d, asked %d", h.fr.runs(), h.term.asked)
	}
}

// /continue's preview (the loop's one confirmation), wrapped at 80
// columns, fits a 45-row terminal with room for the question.
func TestContinuePreviewFitsTheScreen(t *testing.T) {
	h := newHarness(t, "n")
	h.e.out.setWidth(func() int { return 80 })
	big := fullPlan + "\n## Notes\n" + strings.Repeat("a long line of notes about the work that goes on and on\n", 60)
	writePlan(t, h, big)
	h.e.Continue(context.Background(), 3)
	out := h.out.String()
	i := strings.Index(out, "preview: /continue")
	j := strings.Index(out, "cancelled. nothing ran.")
	if i < 0 || j < i {
		t.Fatalf("no preview:\n%s", out)
	}
	// From the start of the preview's line to the question (asked after it).
	start := strings.LastIndex(out[:i], "\n") + 1
	rows := strings.Count(out[start:j], "\n")
	t.Logf("the preview is %d rows at 80 columns", rows)
	if rows > 40 {
		t.Fatalf("the preview is %d rows at 80 columns:\n%s", rows, out[start:j])
	}
	for _, l := range strings.Split(out[start:j], "\n") {
		if len([]rune(l)) > 80 {
			t.Fatalf("a row wider than 80 columns: %q", l)
		}
	}
}
