package room

import (
	"context"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/resume"
)

func TestRunUsage(t *testing.T) {
	claude2 := events.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.00028}
	prevClaude := &events.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.00014}
	if got := runUsage(agents.Claude, claude2, prevClaude); got.InputTokens != 10 || got.OutputTokens != 5 || render.Money(got.CostUSD) != "$0.00014" {
		t.Fatalf("claude's second run: %+v", got)
	}
	codex2 := events.Usage{InputTokens: 20, CachedInputTokens: 4, OutputTokens: 10}
	prevCodex := &events.Usage{InputTokens: 10, CachedInputTokens: 2, OutputTokens: 5}
	if got := runUsage(agents.Codex, codex2, prevCodex); got != (events.Usage{InputTokens: 10, CachedInputTokens: 2, OutputTokens: 5}) {
		t.Fatalf("codex's second run: %+v", got)
	}
	if got := runUsage(agents.Codex, codex2, nil); got != codex2 {
		t.Fatalf("a new conversation: %+v", got)
	}
	// A total that went down is the run's own.
	if got := runUsage(agents.Codex, events.Usage{InputTokens: 3}, prevCodex); got.InputTokens != 3 {
		t.Fatalf("smaller total: %+v", got)
	}
}

// fakeTotals makes the fake runner report usage as the CLIs do: claude's
// cost and codex's tokens as the conversation's running totals.
func fakeTotals(h *harness) {
	n := map[string]int{}
	h.fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		if r.Resume == "" {
			n[r.Agent] = 0
		}
		n[r.Agent]++
		k := int64(n[r.Agent])
		u := events.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.00014 * float64(k)}
		if r.Agent == agents.Codex {
			u = events.Usage{InputTokens: 10 * k, OutputTokens: 5 * k}
		}
		return agents.Result{FinalText: "same answer", Session: "conv-" + r.Agent, Usage: u}
	}
}

func TestPerRunCostsAndSessionTotal(t *testing.T) {
	h := newHarness(t, "y", "y", "y", "y", "y")
	fakeTotals(h)
	ctx := context.Background()
	for _, line := range []string{"same question", "same question", "/agent codex", "same question", "same question"} {
		if _, err := h.e.Process(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	out := h.out.String()
	if n := strings.Count(out, "claude: exit 0 · 0s · $0.00014 · 10 in / 5 out tokens"); n != 2 {
		t.Fatalf("%d claude runs report their own cost:\n%s", n, out)
	}
	if n := strings.Count(out, "codex: exit 0 · 0s · 10 in / 5 out tokens"); n != 2 {
		t.Fatalf("%d codex runs report their own tokens:\n%s", n, out)
	}
	var runs []events.AgentRunMeta
	for _, ev := range h.events(t) {
		if ev.Kind == events.KindAgentRun {
			m, _ := events.MetaOf[events.AgentRunMeta](&ev)
			runs = append(runs, m)
		}
	}
	if len(runs) != 4 || render.Money(runs[1].CostUSD) != "$0.00014" || render.Money(runs[1].ReportedCostUSD) != "$0.00028" ||
		runs[3].InputTokens != 10 || runs[3].ReportedInputTokens != 20 || runs[0].ReportedCostUSD != 0 {
		t.Fatalf("agent_run metas %+v", runs)
	}
	if p := h.e.Panel(ctx); render.Money(p.SessionCostUSD) != "$0.00028" || !strings.Contains(strings.Join(p.Block(200, false), "\n"), "; session $0.00028") {
		t.Fatalf("panel %+v:\n%s", p, strings.Join(p.Block(200, false), "\n"))
	}
	h.out.Reset()
	h.e.Process(ctx, "/budget")
	if !strings.Contains(h.out.String(), "spent this session: $0.00028, 40 in / 20 out tokens over 4 runs (claude $0.00028, 20 in / 10 out tokens; codex 20 in / 10 out tokens)") {
		t.Fatalf("/budget:\n%s", h.out.String())
	}

	// A resumed room tells the next run's own usage from the log.
	e2, err := New(Config{Dir: h.dir, Runner: h.fr, Out: h.out, Term: &scriptTerm{answers: []string{"y", "y"}}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if err := e2.ContinueConversations(); err != nil {
		t.Fatal(err)
	}
	h.out.Reset()
	e2.Active = agents.Codex
	if err := e2.Ask(ctx, "same question"); err != nil {
		t.Fatal(err)
	}
	e2.Active = agents.Claude
	if err := e2.Ask(ctx, "same question"); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "codex: exit 0 · 0s · 10 in / 5 out tokens") || !strings.Contains(out, "claude: exit 0 · 0s · $0.00014 · 10 in") {
		t.Fatalf("after a resume:\n%s", out)
	}
}

// A resumed room's /costs lists the runs the log records, each with its own
// cost, and the session's total; so does /budget.
func TestCostsAfterResume(t *testing.T) {
	h := newHarness(t, "y", "y", "y", "y")
	fakeTotals(h)
	ctx := context.Background()
	for _, line := range []string{"same question", "same question", "/agent codex", "same question"} {
		if _, err := h.e.Process(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	e2, err := New(Config{Dir: h.dir, Runner: h.fr, Out: h.out, Term: &scriptTerm{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if _, err := e2.Resume(ctx, resume.DefaultRecap); err != nil {
		t.Fatal(err)
	}
	if out := h.out.String(); !strings.Contains(out, "costs: $0.00028, 30 in / 15 out tokens over 3 runs, per the log (/costs lists each run)") {
		t.Fatalf("the resume does not say what the runs cost:\n%s", out)
	}
	h.out.Reset()
	if _, err := e2.Process(ctx, "/costs"); err != nil {
		t.Fatal(err)
	}
	got := h.out.String()
	for _, want := range []string{"1. claude /ask: $0.00014, 10 in / 5 out tokens\n", "2. claude /ask: $0.00014, 10 in / 5 out tokens\n",
		"3. codex /ask: 10 in / 5 out tokens\n",
		"spent this session: $0.00028, 30 in / 15 out tokens over 3 runs (claude $0.00028, 20 in / 10 out tokens; codex 10 in / 5 out tokens); 3 runs read back from the log"} {
		if !strings.Contains(got, want) {
			t.Fatalf("/costs after a resume: %q missing from:\n%s", want, got)
		}
	}
	if p := e2.Panel(ctx); render.Money(p.SessionCostUSD) != "$0.00028" {
		t.Fatalf("the panel's session cost after a resume: %+v", p)
	}
}
