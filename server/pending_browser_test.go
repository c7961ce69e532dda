package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/runs"
)

// pendingRunRepo is a repository with an executor run left pending in
// its worktree (3 files changed, not applied) and a log of two agent runs
// with their costs, one of whose command names carries a right-to-left
// override.
func pendingRunRepo(t *testing.T) (dir string, r *runs.Run) {
	t.Helper()
	t.Setenv("RELAY_BATON_WORKTREES", t.TempDir()) // serve, started after, reads the same folder
	dir = gitRepo(t)
	ctx := context.Background()
	r, err := runs.Start(ctx, dir, runs.Options{Agent: "codex", Command: "execute"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Discard(context.Background()) })
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(r.Worktree, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ch, _, err := r.Changes(ctx); err != nil || len(ch) != 3 { // records the count the page reads
		t.Fatalf("the run's changes: %v %v", ch, err)
	}
	rb(t, dir, "note", "before the runs")
	for _, m := range []string{
		`{"agent":"claude","command":"ask\u202e","confirmed":true,"durationMs":2000,"exitCode":0,"ran":true,"costUsd":0.00014,"inputTokens":10,"outputTokens":5}`,
		`{"agent":"codex","command":"execute","confirmed":true,"durationMs":3000,"exitCode":0,"ran":true,"inputTokens":20,"outputTokens":8}`,
	} {
		var meta events.AgentRunMeta
		json.Unmarshal([]byte(m), &meta)
		e := events.New("s", events.Role(meta.Agent), events.KindAgentRun, meta.Agent+" "+meta.Command+": exit 0")
		e.Meta = events.MetaJSON(m)
		appendEvents(t, dir, e)
	}
	return dir, r
}

// TestContextJSONPendingRunAndCosts: serve's /api/context names the
// pending run with its worktree, and each logged run with its cost and
// the log's total.
func TestContextJSONPendingRunAndCosts(t *testing.T) {
	dir, r := pendingRunRepo(t)
	base, _ := serveRepoEnv(t, dir)
	resp, err := http.Get(base + "/api/context")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Pending  string `json:"pendingRun"`
		Worktree string `json:"pendingRunWorktree"`
		Costs    struct {
			Runs   int          `json:"runs"`
			Total  events.Usage `json:"total"`
			Text   string       `json:"text"`
			Latest []struct {
				Agent, Command, Text string
			} `json:"latest"`
		} `json:"costs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/context: %d %v", resp.StatusCode, err)
	}
	if c.Pending != "3 files changed, not applied" || c.Worktree != r.Worktree {
		t.Fatalf("the pending run: %+v (worktree %s)", c, r.Worktree)
	}
	k := c.Costs
	if k.Runs != 2 || k.Total.InputTokens != 30 || k.Total.OutputTokens != 13 || len(k.Latest) != 2 ||
		k.Text != "$0.00014, 30 in / 13 out tokens over 2 runs (claude $0.00014, 10 in / 5 out tokens; codex 20 in / 8 out tokens)" ||
		k.Latest[1].Text != "2. codex /execute: 20 in / 8 out tokens" {
		t.Fatalf("the costs: %+v", k)
	}
}

// TestPagePendingRunAndCostsInBrowser: the page shows the pending run
// line with its worktree, the log's total cost and, opened, each run's
// line, as text with the hidden characters made visible.
func TestPagePendingRunAndCostsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir, r := pendingRunRepo(t)
	ctx, _, _ := pageIn(t, dir, nil)
	if err := within(ctx, 10*time.Second,
		waitText(`#turns`, "before the runs"),
		waitText(`#ctx-run`, "3 files changed, not applied · worktree "+r.Worktree),
		waitText(`#ctx-cost-total`, "$0.00014, 30 in / 13 out tokens over 2 runs"),
		chromedp.Click(`#ctx-cost-total`, chromedp.ByQuery),
		waitText(`#ctx-cost-runs`, "1. claude /ask<U+202E>: $0.00014, 10 in / 5 out tokens"),
		waitText(`#ctx-cost-runs`, "2. codex /execute: 20 in / 8 out tokens"),
	); err != nil {
		var ctxText string
		chromedp.Run(ctx, chromedp.Text(`#ctx`, &ctxText, chromedp.ByQuery))
		t.Fatalf("the page's context: %v\n%s", err, ctxText)
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifactDir(t), "room-page-pending-costs.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	var raw bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("ctx").textContent.includes("\u202e")`, &raw)); err != nil || raw {
		t.Fatalf("a right-to-left override reached the page as itself (%v)", err)
	}
	if strings.Contains(r.Worktree, dir) {
		t.Fatalf("the worktree %s is inside the repository", r.Worktree)
	}
}
