package room

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// newHostHarness is a harness whose engine is hosted for the page.
func newHostHarness(t *testing.T) (*harness, *Host) {
	t.Helper()
	h := &harness{out: &bytes.Buffer{}, fr: &fakeRunner{}, dir: newRepo(t)}
	ctx, cancel := context.WithCancel(context.Background())
	host, err := NewHost(ctx, Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }, InPlace: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.e = host.Engine()
	t.Cleanup(func() {
		cancel()
		host.Close()
	})
	return h, host
}

// waitHost waits for the host's state to satisfy ok (each change is
// looked at; a minute is a hang guard).
func waitHost(t *testing.T, h *Host, what string, ok func(HostState) bool) HostState {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if s := h.State(); ok(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("waited a minute for %s; state %+v\noutput:\n%s", what, h.State(), hostOutput(h))
		}
	}
}

func hostOutput(h *Host) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, o := range h.out {
		b.WriteString(o.Text)
	}
	return b.String()
}

func conflictCode(t *testing.T, err error) string {
	t.Helper()
	var he *HostError
	if !errors.As(err, &he) {
		t.Fatalf("want a HostError, got %v", err)
	}
	return he.Code
}

// TestHostRunsOnlyTheClickThatNamesIt: /plan in the page makes the
// terminal's preview (same text, argv, policy, held-back variables) and
// waits; an answer naming another preview or another hash runs nothing;
// the one naming it runs the planner, logged as confirmed for that id.
func TestHostRunsOnlyTheClickThatNamesIt(t *testing.T) {
	h, host := newHostHarness(t)
	if err := host.Submit("/plan add a flag"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	p := s.Preview
	if !strings.HasPrefix(p.Text, "preview: /plan → claude (planner)") || !strings.Contains(p.Text, "policy:  fake policy for planner") ||
		!strings.Contains(p.Text, "env stripped: ANTHROPIC_API_KEY") || p.Argv == "" || len(p.Stripped) != 1 || !strings.Contains(p.All, "cwd:") {
		t.Fatalf("the page's preview is not the terminal's: %+v", p)
	}
	if err := host.Submit("/plan another"); conflictCode(t, err) != "busy" {
		t.Fatalf("a second command while one waits: %v", err)
	}
	if err := host.Answer(p.ID, strings.Repeat("0", 64), "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a wrong hash: %v", err)
	}
	if err := host.Answer("not-the-id", s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a wrong id: %v", err)
	}
	if h.fr.runs() != 0 {
		t.Fatal("a refused answer ran the agent")
	}
	if err := host.Answer(p.ID, s.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the run's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 1 {
		t.Fatalf("%d runs", h.fr.runs())
	}
	if _, err := os.Stat(filepath.Join(h.e.SessionDir, "plan.md")); err != nil {
		t.Fatalf("plan.md not written: %v\n%s", err, hostOutput(host))
	}
	var confirmed bool
	for _, ev := range h.events(t) {
		if m, err := events.MetaOf[events.CommandMeta](&ev); err == nil && m.Confirmed != nil && *m.Confirmed && m.PreviewID == p.ID {
			confirmed = true
		}
	}
	if !confirmed {
		t.Fatalf("no confirmation logged for preview %s: %s", p.ID, kinds(h.events(t)))
	}
	if out := hostOutput(host); !strings.Contains(out, "working on it") || !strings.Contains(out, "wrote .ai-session/plan.md") {
		t.Fatalf("the run's activity is not in the page's output:\n%s", out)
	}
}

// TestHostCancelRunsNothing: Cancel is the terminal's no, logged as it.
func TestHostCancelRunsNothing(t *testing.T) {
	h, host := newHostHarness(t)
	if err := host.Submit("what is here?"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	if err := host.Answer(s.Preview.ID, s.Hash, "cancel", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the turn's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 0 {
		t.Fatal("cancel ran the agent")
	}
	var logged bool
	for _, ev := range h.events(t) {
		if m, err := events.MetaOf[events.AgentRunMeta](&ev); err == nil && m.Cancelled && !m.Ran && m.Reason == "declined" && m.PreviewID == s.Preview.ID {
			logged = true
		}
	}
	if !logged || !strings.Contains(hostOutput(host), "cancelled. nothing ran.") {
		t.Fatalf("cancel not logged as the terminal logs a no: %s\n%s", kinds(h.events(t)), hostOutput(host))
	}
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a click on the answered preview: %v", err)
	}
}

// TestHostStalePreviewIsMadeAgain: plan.md changes between the preview
// of /execute and the click: the click runs nothing, the refusal is
// logged, and a new preview (the new plan in its prompt) waits instead.
func TestHostStalePreviewIsMadeAgain(t *testing.T) {
	h, host := newHostHarness(t)
	writePlan(t, h, "## Goal\nthe first plan\n")
	if err := host.Submit("/execute"); err != nil {
		t.Fatal(err)
	}
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	writePlan(t, h, "## Goal\nthe second plan\n")
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); conflictCode(t, err) != "stale" {
		t.Fatalf("a click on a preview made from the old plan: %v", err)
	}
	s2 := waitHost(t, host, "the new preview", func(x HostState) bool { return x.Preview != nil && x.Preview.ID != s.Preview.ID })
	if h.fr.runs() != 0 || !strings.Contains(s2.Preview.Prompt, "the second plan") {
		t.Fatalf("after a stale click: %d runs; new prompt %q", h.fr.runs(), s2.Preview.Prompt)
	}
	var stale bool
	for _, ev := range h.events(t) {
		if m, err := events.MetaOf[events.AgentRunMeta](&ev); err == nil && !m.Ran && strings.HasPrefix(m.Reason, "stale: ") && m.PreviewID == s.Preview.ID {
			stale = true
		}
	}
	if !stale {
		t.Fatalf("the stale click is not logged: %s", kinds(h.events(t)))
	}
	if err := host.Answer(s2.Preview.ID, s2.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the run's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 1 || !strings.Contains(h.fr.ran[0].Prompt, "the second plan") {
		t.Fatalf("the run: %d, %+v", h.fr.runs(), h.fr.ran)
	}
}

// TestHostEditPreviewsAgain: an edited prompt is previewed again before
// anything runs.
func TestHostEditPreviewsAgain(t *testing.T) {
	h, host := newHostHarness(t)
	host.Submit("first question")
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	if err := host.Answer(s.Preview.ID, s.Hash, "edit", "the edited question"); err != nil {
		t.Fatal(err)
	}
	s2 := waitHost(t, host, "the edited preview", func(x HostState) bool { return x.Preview != nil && x.Preview.ID != s.Preview.ID })
	if !s2.Preview.Edited || s2.Preview.Prompt != "the edited question" || h.fr.runs() != 0 {
		t.Fatalf("after an edit: %+v, %d runs", s2.Preview, h.fr.runs())
	}
	host.Answer(s2.Preview.ID, s2.Hash, "run", "")
	waitHost(t, host, "the run's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 1 || h.fr.ran[0].Prompt != "the edited question" {
		t.Fatalf("ran %+v", h.fr.ran)
	}
}

// TestHostStopEndsTheRunNotTheRoom: Stop during a run cancels it as
// Ctrl-C does; the next command runs in the same room.
func TestHostStopEndsTheRunNotTheRoom(t *testing.T) {
	h, host := newHostHarness(t)
	started := make(chan struct{}, 1)
	h.fr.run = func(ctx context.Context, i int, req agents.Request) agents.Result {
		if i > 0 {
			return agents.Result{FinalText: "second"}
		}
		started <- struct{}{}
		<-ctx.Done()
		return agents.Result{ExitCode: -1, Cancelled: true, Err: ctx.Err()}
	}
	host.Submit("a long question")
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	host.Answer(s.Preview.ID, s.Hash, "run", "")
	<-started
	if st := host.State(); !st.Running || !st.Busy {
		t.Fatalf("during the run: %+v", st)
	}
	if err := host.Stop(); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the stopped turn's end", func(s HostState) bool { return !s.Busy })
	if host.State().Running {
		t.Fatal("the run lock outlived the run")
	}
	if err := host.Stop(); conflictCode(t, err) != "none" {
		t.Fatalf("stop with nothing running: %v", err)
	}
	host.Submit("again")
	s = waitHost(t, host, "the next preview", func(s HostState) bool { return s.Preview != nil })
	host.Answer(s.Preview.ID, s.Hash, "run", "")
	waitHost(t, host, "the next run's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 2 {
		t.Fatalf("%d runs after Stop", h.fr.runs())
	}
}

// TestRunLockOneRunPerRepository: while one engine's agent runs, a second
// engine on the same repository (another screen) previews nothing and
// says which run holds it; once the run ends it runs.
func TestRunLockOneRunPerRepository(t *testing.T) {
	a := newHarness(t, "y")
	a.e.SetScreen("relay-baton serve's page")
	started, release := make(chan struct{}), make(chan struct{})
	a.fr.run = func(ctx context.Context, i int, req agents.Request) agents.Result {
		close(started)
		<-release
		return agents.Result{FinalText: "done"}
	}
	done := make(chan error, 1)
	go func() { _, err := a.e.Process(context.Background(), "/plan first"); done <- err }()
	<-started

	out := &bytes.Buffer{}
	fr := &fakeRunner{}
	b, err := New(Config{Dir: a.dir, Runner: fr, Out: out, Term: &scriptTerm{answers: []string{"y", "y"}}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Process(context.Background(), "/plan second")
	var held *RunHeldError
	if !errors.As(err, &held) || held.Holder == nil || held.Holder.PID != os.Getpid() || held.Holder.Command != "plan" {
		t.Fatalf("a second run while one holds the repository: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "claude /plan, pid ") || !strings.Contains(msg, "in relay-baton serve's page") {
		t.Fatalf("the refusal does not say who holds it: %s", msg)
	}
	if len(fr.prepared) != 0 || strings.Contains(out.String(), "preview:") {
		t.Fatalf("the second screen previewed a run:\n%s", out.String())
	}
	// Its context panel says it before anything is typed.
	p := b.Panel(context.Background())
	if !strings.Contains(p.Held, "claude /plan, pid ") || !strings.Contains(strings.Join(p.Block(120, false), "\n"), "held by  claude /plan, pid ") ||
		!strings.Contains(p.Line(200, false), "held by claude /plan, pid ") {
		t.Fatalf("the panel does not name the run holding the repository: %q\n%s\n%s", p.Held, strings.Join(p.Block(120, false), "\n"), p.Line(200, false))
	}
	if a.e.Panel(context.Background()).Held != "" {
		t.Fatal("the run's own screen says it is held")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if RunHeldBy(a.dir) != nil {
		t.Fatal("the lock is held after the run")
	}
	if _, err := b.Process(context.Background(), "/plan second"); err != nil || fr.runs() != 1 {
		t.Fatalf("after the first run ended: %v, %d runs", err, fr.runs())
	}
}

// TestHostCompletes: the page completes command names and arguments as
// the terminal's Tab does.
func TestHostCompletes(t *testing.T) {
	_, host := newHostHarness(t)
	if got := host.Complete("/pl"); len(got) != 1 || got[0] != "/plan " {
		t.Fatalf("/pl completes to %q", got)
	}
	if got := host.Complete("/agent co"); len(got) != 1 || got[0] != "/agent codex " {
		t.Fatalf("/agent co completes to %q", got)
	}
	if got := host.Complete("hello"); len(got) != 0 {
		t.Fatalf("free text completes to %q", got)
	}
}

// TestHostRunRefusedWhileAnotherRunHolds: a preview made while the
// repository was free is not run once another screen's run holds it: the
// click is refused (held) and the preview waits; once the other run ends
// the same click runs it.
func TestHostRunRefusedWhileAnotherRunHolds(t *testing.T) {
	h, host := newHostHarness(t)
	host.Submit("a question")
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })

	other, err := New(Config{Dir: h.dir, Runner: &fakeRunner{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetScreen("relay-baton chat")
	release, err := other.lock.Hold("codex", "execute")
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); conflictCode(t, err) != "held" || !strings.Contains(err.Error(), "codex /execute, pid ") || !strings.Contains(err.Error(), "in relay-baton chat") {
		t.Fatalf("Run while another screen's run holds the repository: %v", err)
	}
	if st := host.State(); st.Preview == nil || st.Preview.ID != s.Preview.ID || st.Held == nil || st.Held.Command != "execute" {
		t.Fatalf("after the refusal: %+v", st)
	}
	if h.fr.runs() != 0 {
		t.Fatal("ran while another run held the repository")
	}
	release()
	if err := host.Answer(s.Preview.ID, s.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	waitHost(t, host, "the run's end", func(s HostState) bool { return !s.Busy })
	if h.fr.runs() != 1 {
		t.Fatalf("%d runs", h.fr.runs())
	}
}

// TestHostFollowsTheLogsConversations: a conversation another screen's
// run started is continued by the page's next run of that agent, and a
// /new typed there starts afresh here too.
func TestHostFollowsTheLogsConversations(t *testing.T) {
	h, host := newHostHarness(t)
	o, err := New(Config{Dir: h.dir, Runner: &fakeRunner{run: func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{FinalText: "hi", Session: "conv-from-the-terminal"}
	}}, Term: &scriptTerm{answers: []string{"y"}}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Process(context.Background(), "hello from the terminal"); err != nil {
		t.Fatal(err)
	}
	host.Submit("and from the page")
	s := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	if !strings.Contains(s.Preview.Text, "continues claude conversation conv-from-the-terminal") {
		t.Fatalf("the page does not continue the terminal's conversation:\n%s", s.Preview.Text)
	}
	host.Answer(s.Preview.ID, s.Hash, "cancel", "")
	waitHost(t, host, "the turn's end", func(s HostState) bool { return !s.Busy })
	if _, err := o.Process(context.Background(), "/new claude"); err != nil {
		t.Fatal(err)
	}
	host.Submit("after /new")
	s = waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	if strings.Contains(s.Preview.Text, "conv-from-the-terminal") {
		t.Fatalf("the page continues a conversation the terminal ended with /new:\n%s", s.Preview.Text)
	}
	host.Answer(s.Preview.ID, s.Hash, "cancel", "")
}

// The page's room reads the conversation log through the view the
// context panel reads (serve's), so a long log is read once, not once
// for the panel and again at the page's first command; a view of another
// repository is not taken.
func TestHostSharesTheContextPanelsView(t *testing.T) {
	dir, other := newRepo(t), newRepo(t)
	v, err := OpenView(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenView(other, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		view *View
		same bool
	}{{v, true}, {w, false}, {nil, false}} {
		ctx, cancel := context.WithCancel(context.Background())
		host, err := NewHost(ctx, Config{Dir: dir, Runner: &fakeRunner{}, Getenv: func(string) string { return "" }, InPlace: true}, c.view)
		if err != nil {
			t.Fatal(err)
		}
		if got := host.view == v; got != c.same {
			t.Errorf("view of %v: shared = %v, want %v", c.view, got, c.same)
		}
		if host.view == nil || host.view.Root != host.Engine().Root {
			t.Errorf("the host reads no view of its own repository: %+v", host.view)
		}
		cancel()
		host.Close()
	}
}
