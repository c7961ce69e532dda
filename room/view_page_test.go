package room

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// TestViewPageShowsPendingRunAndCosts: the page's context (what serve
// sends as /api/context) names the pending run with its worktree, and
// each run the log records with what it cost and the total, in the words
// the room's /costs uses.
func TestViewPageShowsPendingRunAndCosts(t *testing.T) {
	h := worktreeHarness(t, "y", "y")
	edit := h.fr.run
	h.fr.run = func(ctx context.Context, i int, r agents.Request) agents.Result {
		res := edit(ctx, i, r)
		res.Usage = events.Usage{InputTokens: 10, OutputTokens: 5}
		if r.Agent == agents.Claude {
			res.Usage.CostUSD = 0.00014
		}
		return res
	}
	ctx := context.Background()
	for _, line := range []string{"what does main.go do", "/execute"} {
		if _, err := h.e.Process(ctx, line); err != nil {
			t.Fatal(err)
		}
	}
	r := h.e.wt.Pending()
	if r == nil {
		t.Fatalf("no pending run:\n%s", h.out.String())
	}
	h.out.Reset()
	if _, err := h.e.Process(ctx, "/costs"); err != nil {
		t.Fatal(err)
	}
	costs := h.out.String()

	v, err := OpenView(h.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Page(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Active      string  `json:"activeAgent"`
		Pending     string  `json:"pendingRun"`
		Worktree    string  `json:"pendingRunWorktree"`
		SessionCost float64 `json:"sessionCostUsd"`
		Costs       struct {
			Runs  int          `json:"runs"`
			Total events.Usage `json:"total"`
			Text  string       `json:"text"`
			Runs1 []struct {
				Agent, Command, Text string
				Usage                events.Usage
			} `json:"latest"`
		} `json:"costs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Active != "claude" || got.Pending != "3 files changed, not applied" || got.Worktree != r.Worktree {
		t.Fatalf("the page's pending run: %s", b)
	}
	c := got.Costs
	if c.Runs != 2 || len(c.Runs1) != 2 || c.Total.InputTokens != 20 || c.Total.CostUSD != 0.00014 || got.SessionCost != 0.00014 {
		t.Fatalf("the page's costs: %s", b)
	}
	if c.Runs1[0].Agent != agents.Claude || c.Runs1[1].Agent != agents.Codex || c.Runs1[1].Command != "execute" {
		t.Fatalf("the page's runs: %s", b)
	}
	// The same words as /costs: each run's line and the total.
	for _, want := range []string{c.Runs1[0].Text + "\n", c.Runs1[1].Text + "\n", "spent this session: " + c.Text + "\n"} {
		if !strings.Contains(costs, want) {
			t.Fatalf("/costs says:\n%s\nthe page: %q", costs, want)
		}
	}
	if !strings.HasPrefix(c.Runs1[1].Text, "2. codex /execute: 10 in / 5 out tokens") || !strings.Contains(c.Text, "$0.00014") || !strings.Contains(c.Text, "over 2 runs") {
		t.Fatalf("the page's words: %s", b)
	}
	// A view with no run yet says so.
	v2, err := OpenView(newRepo(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := v2.Page(ctx); err != nil || p.Costs.Runs != 0 || p.Costs.Text != "no agent run yet" || p.Pending != "" || p.PendingWorktree != "" {
		t.Fatalf("an empty room's page: %+v %v", p, err)
	}
}
