package room

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/replay"
	"github.com/relay-baton/relay-baton/resume"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/procfacts"
)

// harnessNow is the clock newHarness gives the engine.
var harnessNow = time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC)

// withLog replaces the harness's conversation log with a fixture.
func withLog(t *testing.T, h *harness, fixture string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "resume", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.e.LogPath(), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// planAged writes plan.md with an mtime age before the harness clock.
func planAged(t *testing.T, h *harness, plan string, age time.Duration) {
	t.Helper()
	writePlan(t, h, plan)
	at := harnessNow.Add(-age)
	if err := os.Chtimes(filepath.Join(h.e.SessionDir, "plan.md"), at, at); err != nil {
		t.Fatal(err)
	}
}

const fullPlan = "## Goal\nAdd --verbose.\n## Scope (in)\nmain.go\n## Out of scope\nnone\n## Approach\nflag\n## Steps\n1. Edit main.go\n## Risks\nnone\n## Verification\ngo test\n## Next step\nexecute\n"

func TestResumeFresh(t *testing.T) {
	h := newHarness(t)
	rs, err := h.e.Resume(context.Background(), resume.DefaultRecap)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Events != 0 || rs.Active != "" || rs.Plan != nil || rs.Loop != nil || len(rs.Chats) != 0 || len(rs.Recap) != 0 {
		t.Fatalf("fresh state %+v", rs)
	}
	if h.e.Active != agents.Claude || !strings.Contains(h.out.String(), "nothing recorded yet") {
		t.Fatalf("active %s, output %q", h.e.Active, h.out.String())
	}
	// No log file at all reads the same.
	os.Remove(h.e.LogPath())
	if rs, err := resume.Read(h.e.LogPath(), 3); err != nil || rs.Events != 0 {
		t.Fatalf("missing log: %+v %v", rs, err)
	}
}

func TestResumeMidLoopOffersTheStepItStoppedAt(t *testing.T) {
	h := newHarness(t, "n") // the offer's preview is declined
	withLog(t, h, "midloop.jsonl")
	planAged(t, h, fullPlan, 2*time.Hour)
	rs, err := h.e.Resume(context.Background(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Active != agents.Codex || rs.ActiveFrom != "status" || h.e.Active != agents.Codex {
		t.Fatalf("active %q from %q (engine %q)", rs.Active, rs.ActiveFrom, h.e.Active)
	}
	if rs.Plan == nil || rs.Plan.Agent != agents.Claude || !slices.Equal(rs.Plan.Missing, []string{"Risks"}) {
		t.Fatalf("plan %+v", rs.Plan)
	}
	want := resume.LoopRecord{Max: 4, Done: 1, Planned: 1, From: 2, Half: resume.HalfExecute, At: time.Date(2026, 5, 29, 8, 6, 0, 0, time.UTC),
		Previous: "continue step 1/4 by codex: exit 0, 1 changed files; added the flag to main.go"}
	if rs.Loop == nil || *rs.Loop != want {
		t.Fatalf("loop %+v, want %+v", rs.Loop, want)
	}
	if l := rs.LastRun; l == nil || l.Agent != agents.Codex || l.Command != "continue" || l.Duration != 57*time.Second {
		t.Fatalf("last run %+v", l)
	}
	if h.e.Last() != rs.LastRun {
		t.Fatal("the last run was not carried into the engine")
	}
	// The recap skips previews and confirmations: the last 4 turns (the
	// one-shot status in another session among them; its status event,
	// which names the default agent, changes nothing).
	var recap []string
	for _, e := range rs.Recap {
		recap = append(recap, string(e.Kind))
	}
	if got := strings.Join(recap, ","); got != "command,command,agent_run,execute" {
		t.Fatalf("recap kinds %s", got)
	}
	out := h.out.String()
	t.Log(out)
	for _, s := range []string{
		"last 4 turns:",
		replay.FormatEvent(1, rs.Recap[0], false),
		"active agent: codex (restored from the log: active 2h ago)",
		"plan: .ai-session/plan.md, 2h old (written by claude per the log, 1h ago); lacks Risks",
		"an unfinished /continue loop: 1 of 4 steps ran (the room closed during it, 1h ago).",
		"resume:  continues an unfinished loop at step 2 of 4",
		"cancelled. nothing ran.",
	} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
	if h.fr.runs() != 0 || h.term.asked != 1 {
		t.Fatalf("runs %d, asked %d", h.fr.runs(), h.term.asked)
	}
	// The resumed loop's first step prompt is step 2 with step 1's outcome.
	if p := h.fr.prepared[0].Prompt; !strings.Contains(p, "added the flag to main.go") || h.fr.prepared[0].Role != agents.RoleExecutor {
		t.Fatalf("step prompt %q", p)
	}
}

func TestResumeLoopRunsOnlyAfterConfirmation(t *testing.T) {
	h := newHarness(t, "y")
	h.e.pv.autoYes = true // --yes does not confirm a resumed loop
	withLog(t, h, "midloop.jsonl")
	planAged(t, h, fullPlan, time.Hour)
	loopScript(t, h, func(_ context.Context, i int, r agents.Request) agents.Result {
		touch(h.dir, fmt.Sprintf("step%d.txt", i), "x")
		return agents.Result{ExitCode: 0, FinalText: "did a step"}
	}, nil)
	if _, err := h.e.Resume(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if h.term.asked != 1 {
		t.Fatalf("asked %d times (autoYes must not confirm a resumed loop)", h.term.asked)
	}
	if got := agentOrder(h.events(t)); got != "claude,codex,codex,claude,codex,claude,codex" { // the log's plan and step 1, then steps 2, 3 and 4
		t.Fatalf("ran %s", got)
	}
	var steps []float64
	for _, e := range h.events(t) {
		if s, ok := metaMap(e.Meta)["step"].(float64); ok && e.Kind == events.KindExecute {
			steps = append(steps, s)
		}
	}
	if !slices.Equal(steps, []float64{1, 2, 3, 4}) {
		t.Fatalf("execute steps in the log %v", steps)
	}
	if !strings.Contains(h.out.String(), "/continue stopped after 4 of 4 steps: max steps") {
		t.Fatalf("output %s", h.out.String())
	}
	// Resumed again: the loop is finished, nothing is offered.
	rs, err := resume.Read(h.e.LogPath(), 0)
	if err != nil || rs.Loop != nil {
		t.Fatalf("loop after finishing %+v %v", rs.Loop, err)
	}
}

func TestResumeInterruptedResumedLoop(t *testing.T) {
	// A resume offered step 2, it was confirmed, and the room died during
	// step 2: the next resume offers step 2 again, not step 1.
	h := newHarness(t, "n")
	withLog(t, h, "midloop.jsonl")
	planAged(t, h, fullPlan, time.Hour)
	if _, err := h.e.Resume(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	h.e.emit(events.RoleUser, "confirmed: run codex", nil, events.CommandMeta{Agent: "codex", Command: "continue", Confirmed: events.Bool(true)})
	rs, err := resume.Read(h.e.LogPath(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Loop == nil || rs.Loop.From != 2 || rs.Loop.Max != 4 || !strings.Contains(rs.Loop.Previous, "step 1/4") {
		t.Fatalf("loop %+v", rs.Loop)
	}
	// A declined offer leaves the loop as it was: offered again.
	h2 := newHarness(t, "n")
	withLog(t, h2, "midloop.jsonl")
	planAged(t, h2, fullPlan, time.Hour)
	h2.e.Resume(context.Background(), 0)
	if rs, _ := resume.Read(h2.e.LogPath(), 0); rs.Loop == nil || rs.Loop.From != 2 {
		t.Fatalf("after a declined offer: %+v", rs.Loop)
	}
}

func TestResumeCancelledAndFinishedLoops(t *testing.T) {
	h := newHarness(t)
	withLog(t, h, "cancelled-loop.jsonl")
	rs, err := resume.Read(h.e.LogPath(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Loop == nil || rs.Loop.From != 2 || rs.Loop.Done != 2 || rs.Loop.Reason != "cancelled" ||
		!strings.Contains(rs.Loop.Previous, "step 1/4") {
		t.Fatalf("cancelled loop %+v", rs.Loop)
	}
	if rs.Active != agents.Claude || rs.ActiveFrom != "ask" {
		t.Fatalf("active after a question to claude: %q from %q", rs.Active, rs.ActiveFrom)
	}
	if rs.LastRun == nil || !rs.LastRun.Cancelled {
		t.Fatalf("last run %+v", rs.LastRun)
	}
	// No terminal: the loop is described, never run.
	h.e.SetTerminal(nil)
	if _, err := h.e.Resume(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if h.fr.runs() != 0 || len(h.fr.prepared) != 0 || !strings.Contains(h.out.String(), "needs a terminal to confirm on") {
		t.Fatalf("runs %d; output %s", h.fr.runs(), h.out.String())
	}

	withLog(t, h, "finished-loop.jsonl")
	if rs, err := resume.Read(h.e.LogPath(), 0); err != nil || rs.Loop != nil {
		t.Fatalf("finished loop offered: %+v %v", rs.Loop, err)
	}
}

// chatFixture lays out the chat folder the pending-chat fixture refers to.
func chatFixture(t *testing.T, ws string) *conversation.Session {
	t.Helper()
	const sid = "0b6f6a3e-1111-4222-8333-444455556666"
	s, err := conversation.OpenSession(ws, sid)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	writeJSON := func(dir, name string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sent := func(min int) time.Time { return harnessNow.Add(-time.Duration(min) * time.Minute) }
	delivered := func(id, lane string, min int, text string) {
		at := sent(min)
		writeJSON(s.DeliveredDir(), id+".json", conversation.Message{ID: id, From: "relay-baton", Text: text, CreatedAt: sent(min + 1), DeliveredAt: &at, Lane: conversation.Lane(lane)})
	}
	// Queued: one older message ahead of bbbb2222.
	writeJSON(s.InboxDir(), fmt.Sprintf("%013d-zzzz0000.json", sent(70).UnixMilli()), conversation.Message{ID: "zzzz0000", Text: "older", CreatedAt: sent(70)})
	writeJSON(s.InboxDir(), fmt.Sprintf("%013d-bbbb2222.json", sent(58).UnixMilli()), conversation.Message{ID: "bbbb2222", Text: "and the linter", CreatedAt: sent(58)})
	delivered("aaaa1111", "hook", 58, "please run the tests")
	delivered("fe869b44", "hook", 56, "This is a live chat message")
	delivered("eeee5555", "rewake", 55, "summarise the diff")
	delivered("cccc3333", "rewake", 54, "answered already")
	writeJSON(s.OutboxDir(), "eeee5555.json", map[string]string{"text": "diff: 2 files, +10 -3"})
	// The real Claude Code transcript in which fe869b44 was delivered and answered.
	tr, err := os.ReadFile("../transcript/testdata/claude-2.1.328-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	trPath := filepath.Join(t.TempDir(), sid+".jsonl")
	if err := os.WriteFile(trPath, tr, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(conversation.Registration{TranscriptPath: trPath, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	return s
}

func TestResumePendingChat(t *testing.T) {
	h := newHarness(t)
	withLog(t, h, "pending-chat.jsonl")
	s := chatFixture(t, h.dir)
	rs, err := h.e.Resume(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Target != s.ID || h.e.orchestratorTarget() != s.ID || rs.Active != agents.Claude {
		t.Fatalf("target %q (engine %q), active %q", rs.Target, h.e.orchestratorTarget(), rs.Active)
	}
	got := map[string]resume.PendingChat{}
	var ids []string
	for _, c := range rs.Chats {
		got[c.MessageID] = c
		ids = append(ids, c.MessageID)
	}
	if !slices.Equal(ids, []string{"aaaa1111", "bbbb2222", "fe869b44", "eeee5555", "dddd4444"}) {
		t.Fatalf("pending chats %v (cccc3333 has a reply in the log)", ids)
	}
	check := func(id, state string, ok func(resume.PendingChat) bool) {
		t.Helper()
		if c := got[id]; c.State != state || (ok != nil && !ok(c)) {
			t.Fatalf("%s: %+v, want state %s", id, c, state)
		}
	}
	check("aaaa1111", "delivered", func(c resume.PendingChat) bool { return c.Lane == "hook" && c.Reply == "" })
	check("bbbb2222", "queued", func(c resume.PendingChat) bool { return c.Ahead == 1 })
	check("fe869b44", "replied", func(c resume.PendingChat) bool { return c.Reply == "ack 2" })
	check("eeee5555", "replied", func(c resume.PendingChat) bool { return c.Reply == "diff: 2 files, +10 -3" })
	check("dddd4444", "gone", nil)
	out := h.out.String()
	t.Log(out)
	for _, s := range []string{
		"orchestrator target: 0b6f6a3e-1111-4222-8333-444455556666",
		"chat aaaa1111 to 0b6f6a3e (sent 59m ago): delivered via the hook lane 58m ago, no reply yet",
		`chat bbbb2222 to 0b6f6a3e (sent 58m ago): still queued, 1 ahead: "and the linter"`,
		"chat fe869b44 to 0b6f6a3e (sent 57m ago): reply (arrived while the room was closed):",
		"│ ack 2",
		"│ diff: 2 files, +10 -3",
		"chat dddd4444 to 0b6f6a3e (sent 54m ago): no longer in the inbox and never delivered (cancelled)",
	} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
	// The replies picked up are logged, so the next resume does not show them again.
	rs2, err := resume.Read(h.e.LogPath(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, c := range rs2.Chats {
		left = append(left, c.MessageID)
	}
	if !slices.Equal(left, []string{"aaaa1111", "bbbb2222", "dddd4444"}) {
		t.Fatalf("pending after resume %v", left)
	}
	// The panel shows the target's queue.
	p := h.e.Panel(context.Background())
	if p.Target != s.ID || p.QueueDepth != 2 || p.QueueAge != 70*time.Minute {
		t.Fatalf("panel %+v", p)
	}
}

func TestResumeDamagedLog(t *testing.T) {
	h := newHarness(t)
	withLog(t, h, "damaged.jsonl")
	f, err := os.OpenFile(h.e.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schemaVersion":1,"text":"` + strings.Repeat("x", events.MaxReadLineBytes+10) + "\"}\n")
	f.Close()
	rs, err := h.e.Resume(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Stats.Malformed != 3 || rs.Stats.TooLong != 1 || rs.Stats.FirstSkipped != 3 || rs.BadMeta != 1 {
		t.Fatalf("stats %+v, bad meta %d", rs.Stats, rs.BadMeta)
	}
	// What could be read still resumes: the bad /agent claude is ignored.
	if rs.Active != agents.Codex || rs.Plan == nil || rs.LastRun == nil || rs.LastRun.CostUSD != 0.0421 {
		t.Fatalf("state %+v", rs)
	}
	out := h.out.String()
	for _, s := range []string{"resume: skipped 4 damaged lines (first at line 3: ", "ignored unexpected fields in 1 event", "last run: claude /plan, exit 0 in 12.3s"} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestResumeOtherSchemaVersion(t *testing.T) {
	h := newHarness(t)
	withLog(t, h, "other-version.jsonl")
	rs, err := h.e.Resume(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Events != 7 || rs.Versions[0] != 1 || rs.Versions[2] != 6 || len(rs.Versions) != 2 || rs.Unknown != 2 || rs.BadMeta != 1 {
		t.Fatalf("events %d versions %v unknown %d bad %d", rs.Events, rs.Versions, rs.Unknown, rs.BadMeta)
	}
	if rs.Active != agents.Claude || rs.Plan == nil || rs.LastRun == nil || rs.LastRun.Duration != 2*time.Second {
		t.Fatalf("state %+v", rs)
	}
	if len(rs.Recap) != 5 { // the unknown kind and role are not replayed
		t.Fatalf("recap %d events", len(rs.Recap))
	}
	out := h.out.String()
	for _, s := range []string{"7 events of another schema version (v0: 1, v2: 6; this build writes v1): used what it understands",
		"skipped 2 events of a role or kind this build does not know"} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestResumeOrchestratorAndOnlyDamage(t *testing.T) {
	h := newHarness(t)
	line := func(id, ts, role, kind, text, meta string) string {
		return `{"schemaVersion":1,"id":"` + id + `","ts":"2026-05-29T` + ts + `.000Z","sessionId":"s","role":"` + role + `","kind":"` + kind + `","text":"` + text + `","meta":` + meta + "}\n"
	}
	log := line("e1", "09:00:00", "user", "command", "/agent orchestrator", `{"command":"agent"}`) +
		line("e2", "09:00:01", "relay-baton", "status", "active agent: orchestrator", `{"agent":"orchestrator"}`)
	os.WriteFile(h.e.LogPath(), []byte(log), 0o600)
	rs, err := h.e.Resume(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	// This build has no orchestrator lane: the switch is tried through
	// /agent, which refuses, and the room says so and stays on claude.
	if rs.Active != "orchestrator" || h.e.Active != agents.Claude ||
		!strings.Contains(h.out.String(), "active agent was orchestrator; not restored: no chat-capable Claude Code or Codex session") {
		t.Fatalf("active %q / %q; output %s", rs.Active, h.e.Active, h.out.String())
	}
	// A log of nothing but damage says so, and resumes nothing.
	h.out.Reset()
	os.WriteFile(h.e.LogPath(), []byte("garbage\n{\"torn\n"), 0o600)
	rs, err = h.e.Resume(context.Background(), 2)
	if err != nil || rs.Events != 0 || rs.Stats.Malformed != 2 {
		t.Fatalf("%+v %v", rs, err)
	}
	out := h.out.String()
	if !strings.Contains(out, "no usable events") || !strings.Contains(out, "skipped 2 damaged lines (first at line 1") || strings.Contains(out, "0001-01-01") {
		t.Fatalf("output %s", out)
	}
}

func TestResumeCommandArgs(t *testing.T) {
	h := newHarness(t)
	withLog(t, h, "midloop.jsonl")
	h.e.SetTerminal(nil)
	if _, err := h.e.Process(context.Background(), "/resume 2"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "last 2 turns:") {
		t.Fatalf("output %s", h.out.String())
	}
	for _, bad := range []string{"/resume x", "/resume -1", "/resume 1 2", "/resume 500"} {
		if _, err := h.e.Process(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "usage: /resume [N]") {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	if !strings.Contains(HelpText(), "/resume [N]") {
		t.Fatal("/help does not list /resume")
	}
}

// A resumed orchestrator with no session running advises installing the
// hooks only when they are not installed; with them installed (the TUI is
// simply closed) it says to start or resume the session.
func TestResumeAdviceNamesWhatIsMissing(t *testing.T) {
	cfg, codexHome := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", cfg)
	t.Setenv("CODEX_HOME", codexHome)
	// Claude Code's list of sessions unread: the hooks are the only way.
	t.Setenv(claudecode.NoRegistryEnv, "1")
	log := `{"schemaVersion":1,"id":"e1","ts":"2026-05-29T09:00:01.000Z","sessionId":"s","role":"relay-baton","kind":"status","text":"active agent: orchestrator","meta":{"agent":"orchestrator"}}` + "\n"
	resumed := func() string {
		t.Helper()
		h := newHarness(t)
		os.WriteFile(h.e.LogPath(), []byte(log), 0o600)
		if _, err := h.e.Resume(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
		return h.out.String()
	}
	if out := resumed(); !strings.Contains(out, "run `relay-baton hook install` (for Codex: `relay-baton hook install --agent codex`) there") {
		t.Fatalf("no hooks installed:\n%s", out)
	}
	settings := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/relay-baton hook stop"}]}]}}`
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	out := resumed()
	if strings.Contains(out, "run `relay-baton hook install` (for Codex") || !strings.Contains(out, "relay-baton's hooks are installed for Claude Code: start it there (`claude`), or resume an earlier session (`claude --resume`)") {
		t.Fatalf("Claude Code's hooks installed:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "hooks.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/relay-baton hook stop"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := resumed(); !strings.Contains(out, "relay-baton's hooks are installed: start Claude Code or Codex there") {
		t.Fatalf("both installed:\n%s", out)
	}
	// A claude whose `agents --json` answers: a Claude Code session needs
	// no hooks, and the advice says so (Codex's hooks still named).
	bin := filepath.Join(t.TempDir(), "claude")
	os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1 $2\" = \"agents --json\" ] && { echo '[]'; exit 0; }\nexit 3\n"), 0o755)
	t.Setenv("RELAY_BATON_CLAUDE", bin)
	t.Setenv(claudecode.NoRegistryEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	claudecode.ForgetRegistry()
	t.Cleanup(claudecode.ForgetRegistry)
	os.Remove(filepath.Join(codexHome, "hooks.json"))
	if out := resumed(); !strings.Contains(out, "no hooks needed") || !strings.Contains(out, "for Codex: `relay-baton hook install --agent codex`") {
		t.Fatalf("registry readable:\n%s", out)
	}
}
