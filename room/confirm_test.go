package room

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
)

// confirmCase is one way through the confirmation loop.
type confirmCase struct {
	name    string
	answers []string
	edit    func(string) (string, error)
	noTerm  bool
	autoYes bool
	err     error  // what the command returns
	reason  string // the declined event's reason ("" when it goes ahead)
	say     string // a line the room must print
	asked   int    // how many times the question was asked
}

func confirmCases(noun string) []confirmCase {
	return []confirmCase{
		{name: "no", answers: []string{"n"}, err: ErrDeclined, reason: "declined", asked: 1},
		{name: "anything else", answers: []string{"sure"}, err: ErrDeclined, reason: "declined", asked: 1},
		{name: "no answer", answers: nil, err: ErrDeclined, reason: "declined", asked: 1},
		{name: "empty edit", answers: []string{"e"}, edit: func(string) (string, error) { return " \n\n", nil },
			err: ErrDeclined, reason: "empty " + noun + " after edit", say: "the edited " + noun + " is empty.", asked: 1},
		{name: "failed edit", answers: []string{"edit"}, edit: func(string) (string, error) { return "", errors.New("editor exited 3") },
			err: ErrDeclined, reason: "edit failed", say: "edit failed: editor exited 3", asked: 1},
		{name: "no terminal", noTerm: true, err: ErrNeedYes, reason: "no terminal to confirm on"},
		{name: "yes", answers: []string{" Y "}, asked: 1},
		{name: "--yes without a terminal", noTerm: true, autoYes: true},
		{name: "edit then yes", answers: []string{"e", "yes"}, edit: func(t string) (string, error) { return "EDITED " + t + "\n\n", nil }, asked: 2},
	}
}

// checkConfirm checks what one case printed and logged: the previews (one
// more after each edit), the question, and the one event that ends the
// loop, confirmed or declined with its reason and preview id.
func checkConfirm(t *testing.T, h *harness, c confirmCase, err error, question, cancelled, confirmedText string) []events.Event {
	t.Helper()
	if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
		t.Fatalf("%s: err = %v, want %v", c.name, err, c.err)
	}
	if len(h.term.questions) != c.asked {
		t.Fatalf("%s: asked %d times (%q), want %d", c.name, len(h.term.questions), h.term.questions, c.asked)
	}
	for _, q := range h.term.questions {
		if q != question {
			t.Fatalf("%s: asked %q, want %q", c.name, q, question)
		}
	}
	out := h.out.String()
	if c.say != "" && !strings.Contains(out, c.say+"\n") {
		t.Fatalf("%s: output lacks %q:\n%s", c.name, c.say, out)
	}
	if got := strings.Contains(out, cancelled); got != (c.reason != "") {
		t.Fatalf("%s: %q printed: %v:\n%s", c.name, cancelled, got, out)
	}
	list := h.events(t)
	var previews []events.Event
	var ends []events.Event
	for _, ev := range list {
		switch {
		case ev.Kind == events.KindPromptPreview:
			previews = append(previews, ev)
		case metaMap(ev.Meta)["previewId"] != nil:
			ends = append(ends, ev)
		}
	}
	wantPreviews := 1
	if strings.HasPrefix(c.name, "edit then") {
		wantPreviews = 2
	}
	if len(previews) != wantPreviews {
		t.Fatalf("%s: %d previews, want %d: %s", c.name, len(previews), wantPreviews, kinds(list))
	}
	for i, p := range previews {
		if (metaMap(p.Meta)["edited"] == true) != (i > 0) {
			t.Fatalf("%s: preview %d edited = %v", c.name, i, metaMap(p.Meta)["edited"])
		}
	}
	if len(ends) != 1 {
		t.Fatalf("%s: %d events refer to a preview, want 1: %s", c.name, len(ends), kinds(list))
	}
	end := ends[0]
	if metaMap(end.Meta)["previewId"] != previews[len(previews)-1].ID {
		t.Fatalf("%s: the end refers to %v, not the last preview %s", c.name, metaMap(end.Meta)["previewId"], previews[len(previews)-1].ID)
	}
	if c.reason != "" {
		if end.Role != events.RoleRelayBaton || metaMap(end.Meta)["reason"] != c.reason || metaMap(end.Meta)["confirmed"] != false {
			t.Fatalf("%s: declined event %+v", c.name, end)
		}
		return list
	}
	if end.Role != events.RoleUser || end.Kind != events.KindCommand || end.Text != confirmedText ||
		metaMap(end.Meta)["confirmed"] != true || metaMap(end.Meta)["autoYes"] != c.autoYes {
		t.Fatalf("%s: confirmed event %+v", c.name, end)
	}
	return list
}

// The agent run's confirmation: every way through the loop.
func TestConfirmRunPaths(t *testing.T) {
	for _, c := range confirmCases("prompt") {
		h := newHarness(t, c.answers...)
		h.term.edit = c.edit
		if c.noTerm {
			h.e.SetTerminal(nil)
		}
		h.e.pv.autoYes = c.autoYes
		_, err := h.e.Process(context.Background(), "what is this repo?")
		list := checkConfirm(t, h, c, err, "run this? [y/N/e] y runs, v views all, e edits, then Enter ", "cancelled. nothing ran.\n", "confirmed: run claude")
		runs := 1
		if c.reason != "" {
			runs = 0
			last := list[len(list)-1]
			if last.Kind != events.KindAgentRun || last.Text != "claude ask not run: "+c.reason || metaMap(last.Meta)["cancelled"] != true {
				t.Fatalf("%s: last event %+v", c.name, last)
			}
		}
		if h.fr.runs() != runs {
			t.Fatalf("%s: %d runs, want %d", c.name, h.fr.runs(), runs)
		}
		if c.edit != nil && c.reason == "" {
			if p := h.fr.ran[0].Prompt; !strings.HasPrefix(p, "EDITED The user asks you") || strings.HasSuffix(p, "\n") {
				t.Fatalf("%s: ran %q", c.name, p)
			}
		}
	}
}

// The chat message's confirmation: every way through the same loop, with
// its own question, words and events.
func TestConfirmChatPaths(t *testing.T) {
	for _, c := range confirmCases("message") {
		h := newHarness(t, c.answers...)
		s, tr := simSession(t, h, simSID)
		ctx := context.Background()
		if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
			t.Fatal(err)
		}
		h.term.edit = c.edit
		if c.noTerm {
			h.e.SetTerminal(nil)
		}
		h.e.pv.autoYes = c.autoYes
		var played <-chan conversation.Message
		if c.reason == "" {
			played = playHookTurn(t, s, tr, "ok")
		}
		_, err := h.e.Process(ctx, "how is it going?")
		list := checkConfirm(t, h, c, err, "send this? [y/N/e] y sends, v views all, e edits, then Enter ", "cancelled. nothing was sent.\n", "confirmed: send to orchestrator")
		if c.reason != "" {
			last := list[len(list)-1]
			if last.Kind != events.KindCommand || last.Text != "chat message not sent: "+c.reason || metaMap(last.Meta)["sent"] != false || metaMap(last.Meta)["session"] != simSID {
				t.Fatalf("%s: last event %+v", c.name, last)
			}
			if q, _ := s.Queue(); q.Depth != 0 {
				t.Fatalf("%s: %d queued", c.name, q.Depth)
			}
			continue
		}
		m := <-played
		want := "how is it going?"
		if c.edit != nil {
			want = "EDITED how is it going?"
		}
		if m.Text != want {
			t.Fatalf("%s: sent %q, want %q", c.name, m.Text, want)
		}
	}
}
