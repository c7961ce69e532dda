package room

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
)

// /login says how to log in to each agent (it is not an unknown command);
// a run refused for want of a login ends in one line naming the fix.
func TestLoginHint(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.Process(context.Background(), "/login"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{agents.LoginHint(agents.Claude), agents.LoginHint(agents.Codex)} {
		if !strings.Contains(out, want) {
			t.Fatalf("/login printed %q, want %q", out, want)
		}
	}
	h.out.Reset()
	if _, err := h.e.Process(context.Background(), "/login codex"); err != nil || strings.Contains(h.out.String(), "claude") {
		t.Fatalf("/login codex: %v %q", err, h.out.String())
	}

	h = newHarness(t, "y")
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{ExitCode: 1, Duration: time.Second, Err: &agents.LoginError{Agent: agents.Claude}}
	}
	_, err := h.e.Process(context.Background(), "/plan add a flag")
	if err == nil {
		t.Fatal("a failed run returned no error")
	}
	var lines []string
	for _, l := range strings.Split(h.out.String(), "\n") {
		if strings.Contains(l, "not logged in") {
			lines = append(lines, l)
		}
	}
	want := "[relay-baton] " + agents.LoginHint(agents.Claude) + " (exit 1 · 1s)"
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("login failure lines %q, want exactly [%q]", lines, want)
	}
}
