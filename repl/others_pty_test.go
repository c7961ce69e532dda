//go:build !windows

package repl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room"
)

// waitHostState polls the page's room until ok (a minute is a hang guard).
func waitHostState(t *testing.T, h *room.Host, what string, ok func(room.HostState) bool) room.HostState {
	t.Helper()
	deadline := time.Now().Add(ptyGuard)
	for time.Now().Before(deadline) {
		if s := h.State(); ok(s) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("waited for %s; state %+v", what, h.State())
	return room.HostState{}
}

// lastDraw is the last pinned-panel draw on the screen (from its top
// border to its bottom one), "" when none.
func lastDraw(all string) string {
	i := strings.LastIndex(all, "┌─ context ")
	if i < 0 {
		return ""
	}
	j := strings.Index(all[i:], "┘")
	if j < 0 {
		return ""
	}
	return all[i : i+j]
}

// A terminal room open at its prompt, a half-typed line in it, while the
// page's room (in-process, the same repository) runs /plan: the terminal
// shows the page's turn above its prompt (the command, the confirmation,
// the run's end with its cost, the plan), labelled "page:", and its panel
// says "held by" the page's run while it runs and no longer after; the
// typed line is drawn again below and is still the line being edited;
// /status then names the page's run as the last run.
func TestPTYShowsThePagesTurnLive(t *testing.T) {
	p := startOn(t, &fakeRunner{}, func(string) string { return "" }, true)
	p.until(t, "claude› ")
	p.until(t, "┌─ context ") // the panel is pinned
	p.send(t, "half typ")
	p.until(t, "half typ")

	release := make(chan struct{})
	started := make(chan struct{})
	pageRunner := &fakeRunner{run: func(ctx context.Context, _ int, r agents.Request) agents.Result {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return agents.Result{ExitCode: 0, Duration: 2 * time.Second, FinalText: "## Goal\nPAGE PLAN", Usage: events.Usage{CostUSD: 0.42}}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	host, err := room.NewHost(ctx, room.Config{Dir: p.dir, Runner: pageRunner, Getenv: func(string) string { return "" }, InPlace: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); host.Close() }()
	if err := host.Submit("/plan PAGE TASK"); err != nil {
		t.Fatal(err)
	}
	st := waitHostState(t, host, "the page's preview", func(s room.HostState) bool { return s.Preview != nil })
	if err := host.Answer(st.Preview.ID, st.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	<-started
	p.until(t, "page · ")
	p.until(t, "command: /plan PAGE TASK")
	p.until(t, "confirmed: run claude")
	p.until(t, "held by") // the panel, while the page's run holds the repository
	p.until(t, "relay-baton serve's page")

	close(release)
	ended := time.Now()
	p.until(t, "agent_run: claude plan: exit 0 in 2s · $0.42")
	shown := time.Since(ended)
	p.until(t, "plan.md written by claude")
	p.until(t, "half typ") // drawn again below the page's turn
	// The panel, drawn again: the page's run is the last one and holds
	// nothing now.
	deadline := time.Now().Add(ptyGuard)
	for d := lastDraw(p.String()); !strings.Contains(d, "claude /plan exit 0"); d = lastDraw(p.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the panel never showed the page's run as the last; last draw:\n%s", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := lastDraw(p.String()); strings.Contains(d, "held by") {
		t.Fatalf("the panel still says held by after the page's run ended:\n%s", d)
	}
	t.Logf("the page's run end on the terminal's screen %v after it ended", shown)

	p.send(t, "ed\r") // still the line being edited
	p.until(t, "half typed")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	p.send(t, "/status\r")
	p.until(t, "claude /plan")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	<-p.done
	p.done <- nil

	// The room's own turns are not shown as another screen's.
	if strings.Contains(p.String(), "another room:") {
		t.Fatalf("the room's own turn shown as another's:\n%s", p.String())
	}
	for _, l := range strings.Split(p.String(), "\n") {
		if strings.Contains(l, "page · ") && strings.Contains(l, "half typed") {
			t.Fatalf("the room's own line shown as the page's: %q", l)
		}
	}
}

// Without the pinned panel (the output is no terminal the panel fits),
// the room says in a line when the page's run takes the repository and
// when it lets go of it.
func TestPTYSaysHeldWithoutThePanel(t *testing.T) {
	p := startInProcess(t, &fakeRunner{}, func(string) string { return "" })
	p.until(t, "claude› ")
	release := make(chan struct{})
	pageRunner := &fakeRunner{run: func(ctx context.Context, _ int, r agents.Request) agents.Result {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return agents.Result{ExitCode: 0, FinalText: "an answer"}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	host, err := room.NewHost(ctx, room.Config{Dir: p.dir, Runner: pageRunner, Getenv: func(string) string { return "" }, InPlace: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); host.Close() }()
	if err := host.Submit("a question from the page"); err != nil {
		t.Fatal(err)
	}
	st := waitHostState(t, host, "the page's preview", func(s room.HostState) bool { return s.Preview != nil })
	if err := host.Answer(st.Preview.ID, st.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	p.until(t, "page · ")
	p.until(t, "message: a question from the page")
	p.until(t, "held by claude /ask")
	p.until(t, "in relay-baton serve's page")
	p.until(t, "nothing here starts a run until it ends")
	close(release)
	p.until(t, "the repository is free: no agent run holds it")
	p.until(t, "claude› ")
	p.send(t, "\x04")
}
