package room

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room/preview"
	"github.com/relay-baton/relay-baton/workspace"
)

// fakeRunner records requests; run decides each result (and may edit the
// repository, like an executor would).
type fakeRunner struct {
	mu       sync.Mutex
	prepared []agents.Request
	ran      []agents.Request
	argv     func(agents.Request) []string
	run      func(ctx context.Context, i int, req agents.Request) agents.Result
}

func (f *fakeRunner) Prepare(r agents.Request) (agents.Invocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prepared = append(f.prepared, r)
	argv := []string{r.Agent, "-p", r.Prompt}
	if f.argv != nil {
		argv = f.argv(r)
	}
	return agents.Invocation{Path: "/fake/" + r.Agent, Argv: argv, Dir: r.Dir, Policy: "fake policy for " + string(r.Role), Stripped: []string{"ANTHROPIC_API_KEY"}}, nil
}

func (f *fakeRunner) Run(ctx context.Context, r agents.Request) agents.Result {
	f.mu.Lock()
	i := len(f.ran)
	f.ran = append(f.ran, r)
	f.mu.Unlock()
	if r.OnActivity != nil {
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActThinking})
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActTool, Tool: "Bash", Detail: "ls"})
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActText, Text: "working on it"})
	}
	res := agents.Result{Agent: r.Agent, ExitCode: 0, Duration: 5 * time.Millisecond, FinalText: "done"}
	if f.run != nil {
		res = f.run(ctx, i, r)
		res.Agent = r.Agent
	}
	return res
}

func (f *fakeRunner) runs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ran)
}

// scriptTerm answers questions from a list ("" once it runs out).
type scriptTerm struct {
	answers   []string
	asked     int
	questions []string // every question asked, in order
	edit      func(string) (string, error)
}

func (s *scriptTerm) Ask(q string) (string, error) {
	s.asked++
	s.questions = append(s.questions, q)
	if len(s.answers) == 0 {
		return "", errors.New("no more answers")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func (s *scriptTerm) Edit(text string) (string, error) {
	if s.edit == nil {
		return "", errors.New("no editor")
	}
	return s.edit(text)
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte("old\n"), 0o644)
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-qm", "init")
	return dir
}

type harness struct {
	e    *Engine
	out  *bytes.Buffer
	term *scriptTerm
	fr   *fakeRunner
	dir  string
}

func newHarness(t *testing.T, answers ...string) *harness {
	t.Helper()
	return newHarnessIn(t, true, answers...)
}

// newHarnessIn is newHarness with the executor in place (the fakes write
// in the user's tree) or, !inPlace, in a worktree of its own (package worktrack).
func newHarnessIn(t *testing.T, inPlace bool, answers ...string) *harness {
	t.Helper()
	h := &harness{out: &bytes.Buffer{}, term: &scriptTerm{answers: answers}, fr: &fakeRunner{}, dir: newRepo(t)}
	e, err := New(Config{Dir: h.dir, Runner: h.fr, Out: h.out, Term: h.term, Getenv: func(string) string { return "" },
		Now: func() time.Time { return time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC) }, InPlace: inPlace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	h.e = e
	return h
}

func (h *harness) events(t *testing.T) []events.Event {
	t.Helper()
	f, err := os.Open(workspace.LogPath(h.dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var list []events.Event
	st, err := events.Scan(f, func(e events.Event) error { list = append(list, e); return nil })
	if err != nil || st.Skipped() > 0 {
		t.Fatalf("scan: %v %+v", err, st)
	}
	return list
}

func kinds(list []events.Event) string {
	var k []string
	for _, e := range list {
		k = append(k, string(e.Kind))
	}
	return strings.Join(k, ",")
}

func writePlan(t *testing.T, h *harness, plan string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.e.SessionDir, "plan.md"), []byte(plan), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		line     string
		wantCmd  string
		wantArgs string
		wantText string
		wantErr  string
	}{
		{"", "", "", "", ""},
		{"   ", "", "", "", ""},
		{"/help", "help", "", "", ""},
		{"  /HELP  ", "help", "", "", ""},
		{"/Plan add a flag", "plan", "add a flag", "", ""},
		{"/continue --max-steps 5", "continue", "--max-steps 5", "", ""},
		{"/quit", "exit", "", "", ""},
		{"hello there", "", "", "hello there", ""},
		{"what about /plan?", "", "", "what about /plan?", ""},
		{"/x", "", "", "", "unknown command: /x (try /help)"},
		{"/con", "", "", "", "unknown command: /con (did you mean /continue?)"},
		{"/", "", "", "", "unknown command: / (try /help)"},
		{"/123 go", "", "", "", "unknown command: /123 (try /help)"},
		{"/plan\tx", "plan", "x", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			l, err := Parse(tc.line)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if l.Cmd != nil {
				name = l.Cmd.Name
			}
			if name != tc.wantCmd || l.Args != tc.wantArgs || l.Text != tc.wantText {
				t.Fatalf("got cmd %q args %q text %q", name, l.Args, l.Text)
			}
		})
	}
}

func TestUnknownCommandKeepsRoomOpen(t *testing.T) {
	h := newHarness(t)
	exit, err := h.e.Process(context.Background(), "/frobnicate now")
	if exit || err == nil || err.Error() != "unknown command: /frobnicate (try /help)" {
		t.Fatalf("exit=%v err=%v", exit, err)
	}
	exit, err = h.e.Process(context.Background(), "/exit")
	if !exit || err != nil {
		t.Fatalf("/exit: exit=%v err=%v", exit, err)
	}
}

func TestAgentArgument(t *testing.T) {
	// Claude Code's list of sessions unread, as where claude is not
	// installed: the advice is the hooks' whether or not it is on PATH.
	t.Setenv(claudecode.NoRegistryEnv, "1")
	h := newHarness(t)
	ctx := context.Background()
	cases := []struct {
		args, wantActive, wantErr string
	}{
		{"", "claude", ""},
		{"codex", "codex", ""},
		{"CLAUDE", "claude", ""},
		{"orchestrator", "claude", "no chat-capable Claude Code or Codex session in " + h.dir + ": run `relay-baton hook install` (for Codex: `relay-baton hook install --agent codex`) there, then start the agent"},
		{"gemini", "claude", `unknown agent "gemini": choose claude, codex or orchestrator`},
		{"claude codex", "claude", "takes one name"},
		{"codx", "claude", `unknown agent "codx" (did you mean /agent codex?): choose claude, codex or orchestrator`},
		{"orch", "claude", `unknown agent "orch" (did you mean /agent orchestrator?)`},
	}
	for _, c := range cases {
		_, err := h.e.Process(ctx, "/agent "+c.args)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("/agent %s: err = %v, want %q", c.args, err, c.wantErr)
		}
		if h.e.Active != c.wantActive {
			t.Errorf("/agent %s: active = %s, want %s", c.args, h.e.Active, c.wantActive)
		}
	}
	if !strings.Contains(h.out.String(), "active agent: claude (choose with /agent claude|codex|orchestrator)") {
		t.Errorf("bare /agent did not show the active agent:\n%s", h.out)
	}
}

func TestParseMaxSteps(t *testing.T) {
	tests := []struct {
		args string
		want int
		err  bool
	}{
		{"", 3, false}, {"5", 5, false}, {"0", 3, false}, {"-n 4", 4, false}, {"--max-steps 20", 20, false},
		{"--max-steps=2", 2, false}, {"--max-steps 0", 3, false}, {"21", 0, true}, {"-n -1", 0, true},
		{"abc", 0, true}, {"--max-steps", 0, true}, {"1 2", 0, true}, {"--steps 2", 0, true}, {"-n 2.5", 0, true},
	}
	for _, tc := range tests {
		got, err := resume.ParseMaxSteps(tc.args)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("resume.ParseMaxSteps(%q) = %d, %v; want %d, err %v", tc.args, got, err, tc.want, tc.err)
		}
	}
	h := newHarness(t)
	writePlan(t, h, "## Steps\n1. x\n")
	if _, err := h.e.Process(context.Background(), "/continue 99"); err == nil || !strings.Contains(err.Error(), "from 0 to 20") {
		t.Fatalf("/continue 99: %v", err)
	}
	if h.fr.runs() != 0 || h.term.asked != 0 {
		t.Fatal("a bad bound must not preview or run anything")
	}
}

func TestConfirmationDefaultsToNo(t *testing.T) {
	for _, answer := range []string{"", "n", "no", "N", "sure", "yess", " "} {
		h := newHarness(t, answer)
		if _, err := h.e.Process(context.Background(), "/plan add a flag"); !errors.Is(err, ErrDeclined) {
			t.Fatalf("answer %q: err = %v", answer, err)
		}
		if h.fr.runs() != 0 {
			t.Fatalf("answer %q: the agent ran", answer)
		}
		if !strings.Contains(h.out.String(), "cancelled. nothing ran.") {
			t.Fatalf("answer %q: no cancellation message:\n%s", answer, h.out)
		}
		list := h.events(t)
		if got := kinds(list); got != "command,prompt_preview,agent_run" {
			t.Fatalf("answer %q: events %s", answer, got)
		}
		run := list[2]
		if metaMap(run.Meta)["confirmed"] != false || metaMap(run.Meta)["ran"] != false || metaMap(run.Meta)["cancelled"] != true || metaMap(run.Meta)["previewId"] != list[1].ID {
			t.Fatalf("answer %q: agent_run meta %s", answer, run.Meta)
		}
	}
	for _, answer := range []string{"y", "yes", "YES", " Y "} {
		h := newHarness(t, answer)
		h.fr.run = func(context.Context, int, agents.Request) agents.Result {
			return agents.Result{FinalText: "## Goal\nx"}
		}
		if _, err := h.e.Process(context.Background(), "/plan add a flag"); err != nil {
			t.Fatalf("answer %q: %v", answer, err)
		}
		if h.fr.runs() != 1 {
			t.Fatalf("answer %q: runs = %d", answer, h.fr.runs())
		}
	}
}

func TestNoTerminalNeedsYes(t *testing.T) {
	h := newHarness(t)
	h.e.SetTerminal(nil)
	if err := h.e.Execute(context.Background()); !errors.Is(err, ErrNoPlan) {
		t.Fatalf("execute without plan: %v", err)
	}
	writePlan(t, h, "## Steps\n1. x\n")
	if err := h.e.Execute(context.Background()); !errors.Is(err, ErrNeedYes) {
		t.Fatalf("err = %v", err)
	}
	if h.fr.runs() != 0 {
		t.Fatal("ran without confirmation")
	}
	h.e.pv.autoYes = true
	if err := h.e.Execute(context.Background()); err != nil || h.fr.runs() != 1 {
		t.Fatalf("--yes: err %v, runs %d", err, h.fr.runs())
	}
}

func TestEditWithScriptedEditor(t *testing.T) {
	h := newHarness(t, "e", "y")
	bin := t.TempDir()
	script := filepath.Join(bin, "fake-editor")
	// The editor gets extra argv words from $EDITOR (split on spaces, no
	// shell) and the file last.
	os.WriteFile(script, []byte("#!/bin/sh\n[ \"$1\" = \"--wait\" ] || exit 3\nprintf 'EDITED: %s' \"$(head -c 20 \"$2\")\" > \"$2\"\n"), 0o755)
	env := map[string]string{"EDITOR": script + " --wait"}
	h.term.edit = func(text string) (string, error) {
		return EditText(text, func(k string) string { return env[k] }, h.e.SessionDir, nil, h.out, h.out)
	}
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		return agents.Result{FinalText: "answer"}
	}
	if _, err := h.e.Process(context.Background(), "what is this repo?"); err != nil {
		t.Fatal(err)
	}
	if len(h.fr.ran) != 1 || !strings.HasPrefix(h.fr.ran[0].Prompt, "EDITED: The user asks you") {
		t.Fatalf("ran %+v", h.fr.ran)
	}
	list := h.events(t)
	if got := kinds(list); got != "message,prompt_preview,prompt_preview,command,agent_run,message" {
		t.Fatalf("events: %s", got)
	}
	if metaMap(list[2].Meta)["edited"] != true || !strings.HasPrefix(metaMap(list[2].Meta)["prompt"].(string), "EDITED:") {
		t.Fatalf("second preview: %s", list[2].Meta)
	}
	if metaMap(list[4].Meta)["role"] != "ask" {
		t.Fatalf("free text must run as an ask turn: %s", list[4].Meta)
	}
	// No editor configured: the edit fails and nothing runs.
	h2 := newHarness(t, "e")
	h2.term.edit = func(text string) (string, error) {
		return EditText(text, func(string) string { return "" }, h2.e.SessionDir, nil, h2.out, h2.out)
	}
	h2.e.Process(context.Background(), "hi")
	if h2.fr.runs() != 0 || !strings.Contains(h2.out.String(), "$VISUAL and $EDITOR are not set") {
		t.Fatalf("runs %d, out:\n%s", h2.fr.runs(), h2.out)
	}
}

func TestPlanWritesPlanAndEventsInOrder(t *testing.T) {
	h := newHarness(t, "v", "y") // the whole preview first, then yes
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Role != agents.RolePlanner || r.Agent != "claude" {
			t.Errorf("planner request %+v", r)
		}
		return agents.Result{FinalText: "## Goal\nAdd a flag.\n## Steps\n1. Edit main.go\n", Usage: events.Usage{CostUSD: 0.0123}}
	}
	if _, err := h.e.Process(context.Background(), "/plan add a flag"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(h.e.SessionDir, "plan.md"))
	if err != nil || !strings.HasPrefix(string(b), "## Goal\nAdd a flag.") {
		t.Fatalf("plan.md: %q %v", b, err)
	}
	list := h.events(t)
	if got := kinds(list); got != "command,prompt_preview,command,agent_run,plan" {
		t.Fatalf("events: %s", got)
	}
	if p := metaMap(list[1].Meta)["prompt"].(string); !strings.Contains(p, "add a flag") {
		t.Fatalf("preview lacks the exact prompt: %q", p)
	}
	run := list[3]
	if run.Role != events.RoleClaude || metaMap(run.Meta)["confirmed"] != true || metaMap(run.Meta)["exitCode"] != float64(0) || metaMap(run.Meta)["costUsd"] != 0.0123 {
		t.Fatalf("agent_run %+v", run)
	}
	if list[4].Refs["plan"] != "plan.md" {
		t.Fatalf("plan refs %v", list[4].Refs)
	}
	out := h.out.String()
	for _, want := range []string{"preview: /plan → claude (planner)", "argv:    claude -p <prompt, ", "cwd:     " + h.dir,
		"policy:  fake policy for planner", "env stripped: ANTHROPIC_API_KEY", "[claude] ⚙ Bash: ls", "[claude] working on it",
		"claude: exit 0 · 0s · $0.012", "wrote .ai-session/plan.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The short preview: the prompt's first lines, the task's line, the
	// count of those left out, the last lines and the key to see all;
	// the directory and the variables stripped only in the whole one.
	short, all, found := strings.Cut(out, "[relay-baton] preview: /plan")
	_ = short
	if !found {
		t.Fatalf("no preview:\n%s", out)
	}
	first, whole, found := strings.Cut(all, "[relay-baton] preview: /plan")
	if !found || !strings.Contains(first, "v shows all, e edits") || strings.Contains(first, "cwd:") ||
		strings.Count(first, "│ ") > preview.ShortLines+2 || !strings.Contains(whole, "cwd:") ||
		strings.Count(whole, "│ ") <= preview.ShortLines+2 {
		t.Fatalf("short preview then the whole one expected:\n%s", out)
	}
	if q := h.term.questions; len(q) != 2 || q[0] != q[1] {
		t.Fatalf("questions after v: %q", q)
	}
}

func TestReplanBacksUpOnce(t *testing.T) {
	h := newHarness(t, "y")
	writePlan(t, h, "OLD PLAN\n")
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if !strings.Contains(r.Prompt, "OLD PLAN") {
			t.Error("replan prompt lacks the previous plan")
		}
		return agents.Result{FinalText: "NEW PLAN"}
	}
	if _, err := h.e.Process(context.Background(), "/replan do it better"); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(h.e.SessionDir, "plan.2026-05-29T10-00-00-000Z.md")
	if b, err := os.ReadFile(backup); err != nil || string(b) != "OLD PLAN\n" {
		t.Fatalf("backup: %q %v", b, err)
	}
	matches, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "plan.*.md"))
	if len(matches) != 1 {
		t.Fatalf("backups: %v", matches)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "plan.md")); string(b) != "NEW PLAN\n" {
		t.Fatalf("plan.md = %q", b)
	}
}

func TestPlanNeedsTaskAndFinalAnswer(t *testing.T) {
	h := newHarness(t, "y")
	if _, err := h.e.Process(context.Background(), "/plan"); err == nil || !strings.Contains(err.Error(), "needs a task") {
		t.Fatalf("err %v", err)
	}
	h.fr.run = func(context.Context, int, agents.Request) agents.Result { return agents.Result{FinalText: "  "} }
	if _, err := h.e.Process(context.Background(), "/plan x"); err == nil {
		t.Fatal("empty answer must not write plan.md")
	}
	if _, err := os.Stat(filepath.Join(h.e.SessionDir, "plan.md")); err == nil {
		t.Fatal("plan.md written")
	}
	h2 := newHarness(t, "y")
	h2.fr.run = func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{ExitCode: 1, Err: errors.New("boom")}
	}
	_, err := h2.e.Process(context.Background(), "/plan x")
	var ae *AgentError
	if !errors.As(err, &ae) || ae.ExitCode != 1 {
		t.Fatalf("err %v", err)
	}
}

// touch writes a file in the repository (an executor's edit).
func touch(dir, name, content string) {
	os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
}

func TestHeadMovedIsReported(t *testing.T) {
	h := newHarness(t, "y")
	writePlan(t, h, "## Steps\n1. x\n")
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		touch(h.dir, "c.txt", "x")
		gitRun(t, h.dir, "add", "c.txt")
		gitRun(t, h.dir, "commit", "-qm", "agent commit")
		return agents.Result{}
	}
	if err := h.e.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "HEAD moved during the run") {
		t.Fatalf("no warning:\n%s", h.out)
	}
	var audit bool
	for _, e := range h.events(t) {
		if e.Kind == events.KindAudit && strings.Contains(e.Text, "HEAD moved") {
			audit = true
		}
	}
	if !audit {
		t.Fatal("no audit event")
	}
}

func TestDeterministicReview(t *testing.T) {
	h := newHarness(t)
	writePlan(t, h, "## Steps\n1. Edit main.go to add a flag\n2. Add docs.md\n## Risks\nnone\n")
	touch(h.dir, "main.go", "package main\n// flag\n")
	os.Remove(filepath.Join(h.dir, "old.txt"))
	touch(h.dir, "creds.go", "package main\nconst key = \"AKIAABCDEFGHIJKLMNOP\"\n")
	touch(h.dir, "main_test.go", "package main\n")
	touch(h.dir, "huge.txt", strings.Repeat("x\n", reports.LargeDiffLines+1))
	if _, err := h.e.Process(context.Background(), "/review"); err != nil {
		t.Fatal(err)
	}
	r, err := h.e.Review(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Changed) != 5 || fmt.Sprint(r.Deletions) != "[old.txt]" || fmt.Sprint(r.TestsTouched) != "[main_test.go]" ||
		len(r.Secrets) != 1 || !strings.HasPrefix(r.Secrets[0], "creds.go") || len(r.LargeDiffs) != 1 {
		t.Fatalf("%+v", r)
	}
	if len(r.PlanSteps) != 2 || fmt.Sprint(r.PlanSteps[0].Files) != "[main.go]" || len(r.PlanSteps[1].Files) != 0 {
		t.Fatalf("steps %+v", r.PlanSteps)
	}
	if h.fr.runs() != 0 || len(h.fr.prepared) != 0 {
		t.Fatal("/review must not involve an agent")
	}
	if !strings.Contains(h.out.String(), "RISK likely secrets") {
		t.Fatalf("%s", h.out)
	}
	// replay prints "kind: text": the text must not repeat the kind.
	var last events.Event
	for _, ev := range h.events(t) {
		if ev.Kind == events.KindReview {
			last = ev
		}
	}
	if !strings.HasPrefix(last.Text, "5 changed files, ") {
		t.Fatalf("review event text %q", last.Text)
	}
}

func TestReviewClaudeIsPreviewed(t *testing.T) {
	h := newHarness(t, "n")
	h.e.Process(context.Background(), "/review claude")
	if len(h.fr.prepared) != 1 || h.fr.prepared[0].Role != agents.RoleReviewer || h.fr.runs() != 0 {
		t.Fatalf("prepared %+v runs %d", h.fr.prepared, h.fr.runs())
	}
}

func TestHandoff(t *testing.T) {
	h := newHarness(t, "y")
	writePlan(t, h, "## Goal\nShip it.\n## Steps\n1. a\n## Next step\nDo a.\n")
	touch(h.dir, "main.go", "package main\n// changed\n")
	if _, err := h.e.Process(context.Background(), "/handoff"); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(h.e.SessionDir, "handoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Goal", "Previous Agent", "Next Agent", "Fallback Reason", "Token Diet Summary", "Current Repository State",
		"Repo Map", "Relevant Files", "Changed Files", "Progress Summary", "Important Diff", "Known Errors", "Test Results", "Next Steps", "Instructions for Next Agent"} {
		if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(s) + `$`).Match(doc) {
			t.Errorf("handoff.md lacks %q", s)
		}
	}
	if !strings.Contains(string(doc), "Ship it.") || !strings.Contains(string(doc), "M main.go") {
		t.Fatalf("%s", doc)
	}
	if len(h.fr.ran) != 1 || h.fr.ran[0].Agent != "codex" || !strings.Contains(h.fr.ran[0].Prompt, "Ship it.") {
		t.Fatalf("ran %+v", h.fr.ran)
	}
	if len(doc) > diet.Profiles["balanced"].Handoff+100 {
		t.Fatalf("handoff over budget: %d", len(doc))
	}
	// A declined handoff writes nothing; an accepted one backs up the
	// previous handoff.md.
	touch(h.dir, "main.go", "package main\n// changed again\n")
	h.term.answers = []string{"n"}
	h.e.Process(context.Background(), "/handoff claude")
	if m, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "handoff.*.md")); len(m) != 0 {
		t.Fatalf("a declined handoff made backups %v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "handoff.md")); string(b) != string(doc) || len(h.fr.ran) != 1 {
		t.Fatal("a declined handoff rewrote handoff.md or ran")
	}
	h.term.answers = []string{"y"}
	h.e.Process(context.Background(), "/handoff claude")
	if m, _ := filepath.Glob(filepath.Join(h.e.SessionDir, "handoff.*.md")); len(m) != 1 {
		t.Fatalf("backups %v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(h.e.SessionDir, "handoff.md")); !strings.Contains(string(b), "Next Agent\nclaude") {
		t.Fatalf("the accepted handoff did not write handoff.md:\n%s", b)
	}
	var kinds []string
	for _, ev := range h.events(t) {
		if ev.Kind == events.KindHandoff || ev.Kind == events.KindCommand && metaMap(ev.Meta)["confirmed"] != nil || ev.Kind == events.KindAgentRun {
			kinds = append(kinds, string(ev.Kind))
		}
	}
	if got := strings.Join(kinds, ","); got != "command,handoff,agent_run,agent_run,command,handoff,agent_run" {
		t.Fatalf("handoff events in order: %s", got)
	}
	if _, err := h.e.Process(context.Background(), "/handoff gemini"); err == nil {
		t.Fatal("unknown agent accepted")
	}
}

func TestDoctorDeep(t *testing.T) {
	h := newHarness(t)
	h.fr.argv = func(r agents.Request) []string {
		if r.Agent == "codex" {
			return []string{"codex", "exec", "--full-auto", r.Prompt}
		}
		return []string{"claude", "-p", r.Prompt}
	}
	h.e.getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-x"
		}
		return ""
	}
	f, _ := os.OpenFile(workspace.LogPath(h.dir), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n")
	f.Close()
	r := h.e.Doctor(context.Background(), true)
	byName := map[string]reports.Check{}
	for _, c := range r.Checks {
		byName[c.Name] = c
	}
	if c := byName["codex arguments"]; c.Status != "fail" || !strings.Contains(c.Detail, "--full-auto") {
		t.Errorf("codex arguments: %+v", c)
	}
	if c := byName["claude arguments"]; c.Status != "ok" {
		t.Errorf("claude arguments: %+v", c)
	}
	if c := byName["api keys"]; !strings.Contains(c.Detail, "blocked from agents: OPENAI_API_KEY") {
		t.Errorf("api keys: %+v", c)
	}
	if c := byName["conversation.jsonl"]; c.Status != "warn" || !strings.Contains(c.Detail, "1 line fails to parse") {
		t.Errorf("log: %+v", c)
	}
	if !r.Failed() {
		t.Error("a forbidden argument must fail the report")
	}
}

func TestComplete(t *testing.T) {
	h := newHarness(t)
	tests := map[string][]string{
		"/con":        {"tinue "},
		"/CON":        {"tinue "},
		"/re":         {"send ", "plan ", "view ", "sume ", "play "},
		"/target ":    {"lead "},
		"/ta":         {"rget ", "rgets "},
		"/agent ":     {"claude ", "codex ", "orchestrator "},
		"/agent c":    {"laude ", "odex "},
		"/continue ":  {"--max-steps "},
		"/continue -": {"-max-steps "},
		"/handoff co": {"dex "},
		"/plan x":     nil,
		"hello":       nil,
	}
	for in, want := range tests {
		got, _ := Complete(h.e, in)
		var s []string
		for _, r := range got {
			s = append(s, string(r))
		}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("Complete(%q) = %q, want %q", in, s, want)
		}
	}
}

func TestLongPromptGoesToAFile(t *testing.T) {
	h := newHarness(t, "n")
	h.e.Process(context.Background(), strings.Repeat("why? ", 1000))
	list := h.events(t)
	pv := list[1]
	if pv.Kind != events.KindPromptPreview || pv.Refs["prompt"] == "" || metaMap(pv.Meta)["prompt"] != nil {
		t.Fatalf("%+v", pv)
	}
	b, err := os.ReadFile(filepath.Join(h.e.SessionDir, pv.Refs["prompt"]))
	if err != nil || !strings.Contains(string(b), "why? why?") {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(h.out.String(), "v shows all, e edits") {
		t.Fatalf("%s", h.out)
	}
}

func TestAPIKeyAudit(t *testing.T) {
	h := newHarness(t, "y")
	h.e.allow = true
	fr := &passRunner{h.fr}
	h.e.runner, h.e.pv.runner = fr, fr
	h.e.Process(context.Background(), "hello")
	var audit events.Event
	for _, e := range h.events(t) {
		if e.Kind == events.KindAudit {
			audit = e
		}
	}
	b, _ := json.Marshal(audit)
	if !strings.Contains(audit.Text, "OPENAI_API_KEY") || strings.Contains(string(b), "secret-value") {
		t.Fatalf("audit %s", b)
	}
}

type passRunner struct{ *fakeRunner }

func (p *passRunner) Prepare(r agents.Request) (agents.Invocation, error) {
	inv, err := p.fakeRunner.Prepare(r)
	inv.Passed = []string{"OPENAI_API_KEY"}
	inv.Env = []string{"OPENAI_API_KEY=secret-value"}
	return inv, err
}

func TestNoteOnlyLogs(t *testing.T) {
	h := newHarness(t)
	h.e.Process(context.Background(), "/note remember the milk")
	list := h.events(t)
	if kinds(list) != "message" || list[0].Text != "remember the milk" || h.fr.runs() != 0 || len(h.fr.prepared) != 0 {
		t.Fatalf("%+v", list)
	}
}

func TestStatusAndBudget(t *testing.T) {
	h := newHarness(t)
	writePlan(t, h, "x")
	touch(h.dir, "main.go", "package main\n//x\n")
	// relay-baton's own chat files are not changes of the repository.
	os.MkdirAll(filepath.Join(h.dir, ".claude", "session-chat", "0ea7beef-1234-4abc-8def-0123456789ab", "inbox"), 0o700)
	touch(h.dir, ".claude/session-chat/0ea7beef-1234-4abc-8def-0123456789ab/log.jsonl", "{}\n")
	s := h.e.Status(context.Background())
	if !s.Plan || len(s.ChangedFiles) != 1 || s.ChangedFiles[0] != "M main.go" || s.Active != "claude" {
		t.Fatalf("%+v", s)
	}
	if txt := s.Text(); !strings.Contains(txt, "changed: 1 file\n") {
		t.Fatalf("one changed file is not \"1 file\":\n%s", txt)
	}
	b := h.e.Budget(context.Background())
	if b.Diet != "balanced" || b.Handoff != 40000 || b.Total == 0 || b.Ratio <= 0 {
		t.Fatalf("%+v", b)
	}
}

func TestDoctorRenderColour(t *testing.T) {
	r := reports.Doctor{Checks: []reports.Check{{Name: "git", Status: "ok", Detail: "x"}, {Name: "claude", Status: "fail", Detail: "missing"}}}
	plain, coloured := r.Render(false), r.Render(true)
	if strings.Contains(plain, "\x1b[") || plain != r.Text() {
		t.Fatalf("plain render has escapes or differs from Text: %q", plain)
	}
	if !strings.Contains(coloured, "\x1b[31;1mfail") || !strings.Contains(coloured, "\x1b[32;1mok") {
		t.Fatalf("coloured render lacks red fail / green ok: %q", coloured)
	}
}
