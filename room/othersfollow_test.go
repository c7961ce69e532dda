package room

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/screens"
	"github.com/relay-baton/relay-baton/workspace"
)

// othersGuard is a hang guard for the follower's deliveries, never a
// bound.
const othersGuard = time.Minute

func nextOther(t *testing.T, ch <-chan screens.Other, what string) screens.Other {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(othersGuard):
		t.Fatalf("waited a minute for %s", what)
	}
	return screens.Other{}
}

// note is what a /note-like message of the test's second writer says.
func note(e *Engine, text string) {
	e.emit(events.RoleUser, text, nil, events.MessageMeta{Note: true})
}

// A second writer's events reach the follower exactly once each and in
// order; the room's own never do, nor a line before the room started;
// a torn line is delivered once it is whole; a copy of a delivered line
// is not delivered again; after the log is truncated the follower reads
// the new file from its top.
func TestFollowOthersDeliversOnlyOthersOnceInOrder(t *testing.T) {
	h := newHarness(t)
	before, err := New(Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	note(before, "BEFORE THE ROOM")
	before.Close()

	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan screens.Other, 100)
	wait := h.e.FollowOthers(ctx, func(o screens.Other) { ch <- o })
	defer func() { cancel(); wait() }()

	other, err := New(Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	note(h.e, "OWN 1")
	note(other, "OTHER 1")
	note(h.e, "OWN 2")
	note(other, "OTHER 2")
	note(other, "OTHER 3")
	for i := 1; i <= 3; i++ {
		o := nextOther(t, ch, "OTHER "+string(rune('0'+i)))
		if want := "OTHER " + string(rune('0'+i)); o.Event.Text != want {
			t.Fatalf("delivery %d: %q, want %q", i, o.Event.Text, want)
		}
		if o.Event.SessionID != other.SessionID || o.From() != "another relay-baton process" {
			t.Fatalf("delivery %d: session %s from %q", i, o.Event.SessionID, o.From())
		}
	}

	// A line another process is in the middle of writing: nothing until
	// it is whole, then it once.
	path := workspace.LogPath(h.dir)
	ev := events.NewWithMeta(other.SessionID, events.RoleUser, "TORN", events.MessageMeta{Note: true})
	line := string(events.AppendJSON(nil, ev))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line[:20])
	note(h.e, "OWN 3") // the log's Append puts it on a line of its own: the torn head is skipped
	f.Close()
	note(other, "OTHER 4")
	if o := nextOther(t, ch, "OTHER 4"); o.Event.Text != "OTHER 4" {
		t.Fatalf("after a torn head: %q, want OTHER 4", o.Event.Text)
	}
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line[:30])
	f.WriteString(line[30:] + "\n") // whole now, in two writes
	f.Close()
	if o := nextOther(t, ch, "TORN"); o.Event.Text != "TORN" {
		t.Fatalf("a line written in two pieces: %q, want TORN", o.Event.Text)
	}
	// The same event again (same id): not shown twice.
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line + "\n")
	f.Close()
	note(other, "OTHER 5")
	if o := nextOther(t, ch, "OTHER 5"); o.Event.Text != "OTHER 5" {
		t.Fatalf("after a copy of TORN: %q, want OTHER 5", o.Event.Text)
	}

	// Truncated: the follower starts again from the top of what is there.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	note(h.e, "OWN 4")
	note(other, "OTHER 6")
	if o := nextOther(t, ch, "OTHER 6"); o.Event.Text != "OTHER 6" {
		t.Fatalf("after a truncation: %q, want OTHER 6", o.Event.Text)
	}
	note(other, "OTHER 7")
	if o := nextOther(t, ch, "OTHER 7"); o.Event.Text != "OTHER 7" {
		t.Fatalf("then: %q, want OTHER 7", o.Event.Text)
	}
	select {
	case o := <-ch:
		t.Fatalf("delivered besides: %q", o.Event.Text)
	default:
	}
}

// The page's turns are labelled "page:" and shown as the resume recap
// shows a turn, inert; AdoptOthers makes the page's run this room's last
// run (/status), counts its cost and continues its conversation.
func TestOthersFromThePageAdopted(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan screens.Other, 100)
	wait := h.e.FollowOthers(ctx, func(o screens.Other) { ch <- o })
	defer func() { cancel(); wait() }()

	hostCtx, hostCancel := context.WithCancel(context.Background())
	fr := &fakeRunner{run: func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{ExitCode: 0, Duration: 1500 * time.Millisecond, FinalText: "## Goal\nPAGE PLAN \x1b[31m", Usage: events.Usage{CostUSD: 0.25}, Session: "11111111-2222-4333-8444-555555555555"}
	}}
	host, err := NewHost(hostCtx, Config{Dir: h.dir, Runner: fr, Getenv: func(string) string { return "" }, InPlace: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { hostCancel(); host.Close() }()
	if err := host.Submit("/plan from the page"); err != nil {
		t.Fatal(err)
	}
	st := waitHost(t, host, "the preview", func(s HostState) bool { return s.Preview != nil })
	if err := host.Answer(st.Preview.ID, st.Hash, "run", ""); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for {
		o := nextOther(t, ch, "the page's run")
		if o.From() != "page" {
			t.Fatalf("the page's event labelled %q", o.From())
		}
		text := o.Text(false)
		if strings.ContainsRune(text, 0x1b) {
			t.Fatalf("a control byte reached the text: %q", text)
		}
		shown = append(shown, text)
		if o.Event.Kind == events.KindPlan {
			break
		}
	}
	all := strings.Join(shown, "\n")
	for _, want := range []string{"page · ", "command: /plan from the page", "confirmed", "agent_run", "exit 0", "$0.25", "plan"} {
		if !strings.Contains(all, want) {
			t.Errorf("the page's turn lacks %q:\n%s", want, all)
		}
	}
	h.e.AdoptOthers()
	if l := h.e.Last(); l == nil || l.Agent != agents.Claude || l.Command != "plan" || l.CostUSD != 0.25 {
		t.Fatalf("last run after the page's: %+v", l)
	}
	if c := h.e.convs.m[agents.Claude]; c == nil || c.ID != "11111111-2222-4333-8444-555555555555" {
		t.Fatalf("claude's conversation after the page's run: %+v", c)
	}
	if h.e.spent.Runs != 1 || h.e.spent.Total.CostUSD != 0.25 {
		t.Fatalf("spent %+v", h.e.spent)
	}
	h.out.Reset()
	if _, err := h.e.Process(context.Background(), "/status"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.out.String(), "claude /plan") {
		t.Fatalf("/status does not name the page's run:\n%s", h.out.String())
	}
}

// Two terminal rooms on one repository: each shows the other's turns,
// labelled "another room", and never its own; a room that closed leaves
// no record behind.
func TestFollowOthersTwoRooms(t *testing.T) {
	h := newHarness(t)
	second, err := New(Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	ctx, cancel := context.WithCancel(context.Background())
	toFirst, toSecond := make(chan screens.Other, 10), make(chan screens.Other, 10)
	waitFirst := h.e.FollowOthers(ctx, func(o screens.Other) { toFirst <- o })
	waitSecond := second.FollowOthers(ctx, func(o screens.Other) { toSecond <- o })
	note(h.e, "FROM THE FIRST")
	note(second, "FROM THE SECOND")
	if o := nextOther(t, toFirst, "the second room's turn"); o.Event.Text != "FROM THE SECOND" || o.From() != "another room" {
		t.Fatalf("the first room got %q from %q", o.Event.Text, o.From())
	}
	if o := nextOther(t, toSecond, "the first room's turn"); o.Event.Text != "FROM THE FIRST" || o.From() != "another room" {
		t.Fatalf("the second room got %q from %q", o.Event.Text, o.From())
	}
	if !strings.HasPrefix(screens.Other{Event: events.Event{Role: events.RoleUser, Kind: events.KindMessage, Text: "x"}, Screen: screens.Room}.Text(false), "another room · ") {
		t.Fatal("the label does not lead the line")
	}
	cancel()
	waitFirst()
	waitSecond()
	if names, _ := os.ReadDir(h.e.SessionDir + "/" + screens.Dir); len(names) != 0 {
		t.Fatalf("screen records left after both rooms closed: %v", names)
	}
	select {
	case o := <-toFirst:
		t.Fatalf("the first room got besides: %q", o.Event.Text)
	case o := <-toSecond:
		t.Fatalf("the second room got besides: %q", o.Event.Text)
	default:
	}
}

// The page's /execute leaves a pending run: a terminal room adopts it
// (the panel's pending line, /apply there); the page's /apply of it makes
// it no longer pending in the terminal room.
func TestOthersPendingRunAdopted(t *testing.T) {
	h, host := newHostWorktreeHarness(t) // the page, with a pending run
	term, err := New(Config{Dir: h.dir, Runner: h.fr, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan screens.Other, 100)
	wait := term.FollowOthers(ctx, func(o screens.Other) { ch <- o })
	defer func() { cancel(); wait() }()
	// A run left pending before this room started is not taken up by an
	// unrelated turn of the page's (the room's greeting names kept runs).
	hostCommand(t, host, "/agent codex", "")
	for o := nextOther(t, ch, "the page's /agent"); o.Event.Kind != events.KindCommand; o = nextOther(t, ch, "the page's /agent") {
	}
	term.AdoptOthers()
	if r := term.wt.Pending(); r != nil {
		t.Fatalf("the terminal room took up run %s, left pending before it started, on the page's /agent", r.ID)
	}
	// The pending run is discarded in the page, then a new one is made
	// there: the terminal room, which saw neither before, adopts the new.
	hostCommand(t, host, "/undo", "run")
	if h.e.wt.Pending() != nil {
		t.Fatalf("the page's /undo left the run pending:\n%s", hostOutput(host))
	}
	hostCommand(t, host, "/execute", "run")
	page := h.e.wt.Pending()
	if page == nil {
		t.Fatalf("no pending run after the page's second /execute:\n%s", hostOutput(host))
	}
	for o := nextOther(t, ch, "the page's execute"); o.Event.Kind != events.KindExecute; o = nextOther(t, ch, "the page's execute") {
	}
	term.AdoptOthers()
	if r := term.wt.Pending(); r == nil || r.ID != page.ID || term.wt.PendingLine() == "" {
		t.Fatalf("the terminal room's pending run %+v, want the page's %s", r, page.ID)
	}
	hostCommand(t, host, "/apply", "run")
	if h.e.wt.Pending() != nil {
		t.Fatalf("the page's /apply left the run pending:\n%s", hostOutput(host))
	}
	for o := nextOther(t, ch, "the page's apply"); !strings.Contains(o.Event.Text, "appl"); o = nextOther(t, ch, "the page's apply") {
	}
	term.AdoptOthers()
	if r := term.wt.Pending(); r != nil {
		t.Fatalf("the terminal room still has run %s pending after the page applied it", r.ID)
	}
}
