package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// screenText is what the terminal room has printed so far.
func (r *ptyRoom) screenText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// seq waits on a terminal room's screen for texts in order: each after
// the one before it (ptyRoom.until looks at the whole screen).
type seq struct {
	r    *ptyRoom
	mark int
}

func (q *seq) until(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(browserGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		all := q.r.screenText()
		if i := strings.Index(all[q.mark:], want); i >= 0 {
			q.mark += i + len(want)
			return
		}
	}
	t.Fatalf("room: no %q on screen after what was seen:\n%s", want, q.r.screenText())
}

// loggedAt is when the first event of the log that satisfies ok was
// written (its timestamp), under a hang guard.
func loggedAt(t *testing.T, dir string, ok func(events.Event) bool) time.Time {
	t.Helper()
	for _, e := range logEvents(t, dir) {
		if ok(e) {
			return e.Time()
		}
	}
	t.Fatal("no such event in the log")
	return time.Time{}
}

func ranAs(command string) func(events.Event) bool {
	return func(e events.Event) bool {
		m, err := events.MetaOf[events.AgentRunMeta](&e)
		return err == nil && e.Kind == events.KindAgentRun && m.Ran && m.Command == command
	}
}

// TestTwoScreensShowEachOthersRuns: the real `relay-baton serve` and the
// real `relay-baton chat` on a pty, open on one repository, the page in
// headless Chromium, the real claude against the mock. A /plan confirmed
// with a click in the page shows in the terminal above its prompt
// (labelled "page:", the command, its confirmation, the run's end with its
// exit, duration and cost, the plan written), the line half typed in the
// terminal is drawn again and sent intact, and the terminal's /status
// names the page's run as the last one. Then a question confirmed in the
// terminal runs claude (continuing the conversation the page's run
// began), and the page shows the terminal's turn: the question, the
// confirmation, the run's end with its duration, claude's reply, and the
// run in the context's last run and costs.
func TestTwoScreensShowEachOthersRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Text("## Goal\nAdd a --verbose flag.\n\n## Steps\n1. Edit main.go\n")),
		agenttest.Reply(agenttest.Text("TERMINAL ANSWER: the repository holds one commit.")),
	)
	dir := gitRepo(t)
	env := agenttest.OfflineEnv(t, a, nil)
	base, _ := serveRepoEnv(t, dir, env...)
	room := &seq{r: startRoom(t, dir, env...)}
	ctx := browser(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(pageURL(t, base))); err != nil {
		t.Fatal(err)
	}
	room.until(t, "claude›")
	room.r.f.Write([]byte("what is in this repo"))
	room.until(t, "what is in this repo")

	// The page's run, shown in the terminal.
	if err := within(ctx, 30*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("/plan add a --verbose flag"),
		waitText(`#preview-title`, "run this? /plan → claude (planner)"),
		press(`#preview-run`),
		waitText(`#console`, "wrote .ai-session/plan.md"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("the page's run: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	room.until(t, "page · ")
	room.until(t, "command: /plan add a --verbose flag")
	room.until(t, "confirmed: run claude")
	room.until(t, "agent_run: claude plan: exit 0")
	seen := time.Now()
	room.until(t, "plan.md written by claude")
	pageRan := loggedAt(t, dir, ranAs("plan"))
	t.Logf("the page's run end on the terminal's screen %v after it was logged (the log's millisecond timestamp to the test reading the pty)", seen.Sub(pageRan).Round(time.Millisecond))
	room.until(t, "what is in this repo") // drawn again below the page's turn

	room.r.f.Write([]byte("?\r")) // the line being edited all along
	room.until(t, "run this? [y/N/e]")
	if !strings.Contains(room.r.screenText(), "what is in this repo?") {
		t.Fatalf("the half-typed line was not kept:\n%s", room.r.screenText())
	}
	room.r.f.Write([]byte("n"))
	room.until(t, "cancelled. nothing ran.")
	room.r.f.Write([]byte("/status\r"))
	room.until(t, "last run: claude /plan")

	// The terminal's run, shown in the page.
	room.r.f.Write([]byte("what is in this repository?\r"))
	room.until(t, "conversation: continues claude conversation") // the page's run's
	room.until(t, "run this? [y/N/e]")
	room.r.f.Write([]byte("y"))
	room.until(t, "TERMINAL ANSWER")
	if err := within(ctx, time.Second, waitText(`#turns`, "claude ask: exit 0")); err != nil {
		t.Fatalf("the terminal's run in the page: %v\nturns: %s", err, pageText(ctx, t, "#turns"))
	}
	shown := time.Now()
	if err := within(ctx, time.Second,
		waitText(`#turns`, "what is in this repository?"),
		waitText(`#turns`, "confirmed"),
		waitText(`#turns`, "TERMINAL ANSWER: the repository holds one commit."),
		waitText(`#turns`, "claude ask: exit 0 in "), // its duration
		waitText(`#ctx-last`, "claude /ask"),
		waitText(`#ctx-cost-total`, "over 2 runs"), // its cost, with the page's run's
	); err != nil {
		t.Fatalf("the terminal's run in the page: %v\nturns: %s", err, pageText(ctx, t, "#turns"))
	}
	termRan := loggedAt(t, dir, ranAs("ask"))
	t.Logf("the terminal's run end in the page %v after it was logged", shown.Sub(termRan).Round(time.Millisecond))
	if n := len(a.Requests()); n != 2 {
		t.Fatalf("claude made %d requests, want 2 (one run per screen)", n)
	}
	// Each screen's own turns are not shown to it as another's.
	for _, l := range strings.Split(room.r.screenText(), "\n") {
		if strings.Contains(l, "page · ") && strings.Contains(l, "what is in this repository") {
			t.Fatalf("the terminal's own turn shown as the page's: %q", l)
		}
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err == nil {
		p := filepath.Join(artifactDir(t), "two-screens-page.png")
		if os.WriteFile(p, png, 0o644) == nil {
			t.Logf("screenshot: %s", p)
		}
	}
}
