package room

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

func TestCostsLists(t *testing.T) {
	var s Spent
	if got := s.CostsText(); !strings.Contains(got, "no agent run yet") {
		t.Fatalf("no run: %q", got)
	}
	s.addRun("claude", "plan", time.Time{}, events.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.00014})
	s.addRun("codex", "execute", time.Time{}, events.Usage{InputTokens: 20, OutputTokens: 7})
	got := s.CostsText()
	for _, want := range []string{"1. claude /plan: $0.00014, 10 in / 5 out tokens\n", "2. codex /execute: 20 in / 7 out tokens\n",
		"spent this session: $0.00014, 30 in / 12 out tokens over 2 runs"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q missing from:\n%s", want, got)
		}
	}
	for range costsListed {
		s.addRun("codex", "ask", time.Time{}, events.Usage{InputTokens: 1})
	}
	if got := s.CostsText(); !strings.HasPrefix(got, "(2 earlier runs not listed)\n3. codex /ask") {
		t.Fatalf("the list is not the latest %d runs:\n%s", costsListed, got)
	}
}

// /costs is a command (a new user looked for it), and a near miss is
// pointed at it.
func TestCostsCommand(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.Process(context.Background(), "/costs"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "spent this session: no agent run yet") {
		t.Fatalf("%s", h.out)
	}
	if _, err := Parse("/cost"); err == nil || !strings.Contains(err.Error(), "did you mean /costs") {
		t.Fatalf("/cost: %v", err)
	}
}
