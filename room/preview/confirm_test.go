package preview

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// script is a Terminal answering from a list; edit returns its text.
type script struct {
	answers []string
	asked   []string
	edit    func(string) (string, error)
}

func (s *script) Ask(q string) (string, error) {
	s.asked = append(s.asked, q)
	if len(s.answers) == 0 {
		return "", errors.New("no more answers")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func (s *script) Edit(text string) (string, error) {
	if s.edit == nil {
		return "", ErrNoEditor
	}
	return s.edit(text)
}

// trail records what a Confirmation's functions were called with.
type trail struct{ calls []string }

func (tr *trail) confirmation() Confirmation {
	n := 0
	return Confirmation{Question: "run this? [y/N/e] ", Verb: "runs", Noun: "prompt",
		Preview: func(text string, edited bool) (string, error) {
			n++
			tr.calls = append(tr.calls, fmt.Sprintf("preview %q edited=%v", text, edited))
			return fmt.Sprintf("p%d", n), nil
		},
		View:      func(text string) { tr.calls = append(tr.calls, "view") },
		Confirmed: func(id string) { tr.calls = append(tr.calls, "yes "+id) },
		Declined:  func(id, why string) { tr.calls = append(tr.calls, "no "+id+": "+why) },
		Card:      func(text string) Preview { return Preview{Command: "plan", Text: "short " + text, Prompt: text} },
	}
}

func screen(t Terminal, said *strings.Builder) Screen {
	return Screen{Term: t, Say: func(f string, a ...any) { fmt.Fprintf(said, f+"\n", a...) },
		AskLine: func(q, hint string) string { return q + hint }}
}

// TestConfirmTypedAnswers: v shows all and asks again, e edits and
// previews again, y confirms the edited text; anything else declines.
func TestConfirmTypedAnswers(t *testing.T) {
	var said strings.Builder
	term := &script{answers: []string{"v", "e", "y"}, edit: func(s string) (string, error) { return s + " more\n", nil }}
	tr := &trail{}
	got, err := screen(term, &said).Confirm(tr.confirmation(), "do it")
	want := `[preview "do it" edited=false view preview "do it more" edited=true yes p2]`
	if err != nil || got != "do it more" || fmt.Sprint(tr.calls) != want {
		t.Fatalf("got %q %v, calls %v", got, err, tr.calls)
	}
	if !strings.Contains(term.asked[0], "y runs, v views all, e edits, then Enter") {
		t.Fatalf("asked %q", term.asked[0])
	}
	tr = &trail{}
	if _, err := screen(&script{answers: []string{"sure"}}, &said).Confirm(tr.confirmation(), "x"); !errors.Is(err, ErrDeclined) || tr.calls[1] != "no p1: declined" {
		t.Fatalf("an answer other than y: %v %v", err, tr.calls)
	}
}

// TestConfirmWithoutAnEditorAsksAgain: e with no editor says why and asks
// the same question about the same preview; an empty edit declines.
func TestConfirmWithoutAnEditorAsksAgain(t *testing.T) {
	var said strings.Builder
	tr := &trail{}
	got, err := screen(&script{answers: []string{"e", "y"}}, &said).Confirm(tr.confirmation(), "x")
	if err != nil || got != "x" || len(tr.calls) != 2 || !strings.Contains(said.String(), "answer y for the prompt as shown") {
		t.Fatalf("%q %v %v %q", got, err, tr.calls, said.String())
	}
	tr = &trail{}
	term := &script{answers: []string{"e"}, edit: func(string) (string, error) { return " \n", nil }}
	if _, err := screen(term, &said).Confirm(tr.confirmation(), "x"); !errors.Is(err, ErrDeclined) || tr.calls[1] != "no p1: empty prompt after edit" {
		t.Fatalf("empty edit: %v %v", err, tr.calls)
	}
}

// TestConfirmNeedsATerminalOrYes: nothing to ask on is ErrNeedYes (logged
// as declined); --yes confirms without asking.
func TestConfirmNeedsATerminalOrYes(t *testing.T) {
	var said strings.Builder
	tr := &trail{}
	if _, err := screen(nil, &said).Confirm(tr.confirmation(), "x"); !errors.Is(err, ErrNeedYes) || tr.calls[1] != "no p1: no terminal to confirm on" {
		t.Fatalf("no terminal: %v %v", err, tr.calls)
	}
	tr = &trail{}
	s := screen(nil, &said)
	s.AutoYes = true
	if _, err := s.Confirm(tr.confirmation(), "x"); err != nil || tr.calls[1] != "yes p1" {
		t.Fatalf("--yes: %v %v", err, tr.calls)
	}
}

// clicker is a Confirmer: it answers each card from a list.
type clicker struct {
	script
	cards   []Preview
	answers []Answer
}

func (c *clicker) Confirm(p Preview) Answer {
	c.cards = append(c.cards, p)
	a := c.answers[0]
	c.answers = c.answers[1:]
	return a
}

// TestConfirmerAnswersTheCard: a Confirmer is handed each preview as a
// card named by its id (never asked a line); Edited previews again, Stale
// is ErrStale, a no is ErrDeclined with its reason.
func TestConfirmerAnswersTheCard(t *testing.T) {
	var said strings.Builder
	c := &clicker{answers: []Answer{{Edited: "new text\n"}, {Yes: true}}}
	tr := &trail{}
	got, err := screen(c, &said).Confirm(tr.confirmation(), "old")
	if err != nil || got != "new text" || len(c.cards) != 2 || c.cards[1].ID != "p2" || !c.cards[1].Edited || c.cards[1].Question != "run this? [y/N/e] " || len(c.asked) != 0 {
		t.Fatalf("%q %v cards %+v asked %v", got, err, c.cards, c.asked)
	}
	c = &clicker{answers: []Answer{{Stale: "HEAD moved"}}}
	tr = &trail{}
	if _, err := screen(c, &said).Confirm(tr.confirmation(), "x"); !errors.Is(err, ErrStale) || tr.calls[1] != "no p1: stale: HEAD moved" {
		t.Fatalf("stale: %v %v", err, tr.calls)
	}
	c = &clicker{answers: []Answer{{}}}
	tr = &trail{}
	if _, err := screen(c, &said).Confirm(tr.confirmation(), "x"); !errors.Is(err, ErrDeclined) || tr.calls[1] != "no p1: declined" {
		t.Fatalf("cancel: %v %v", err, tr.calls)
	}
}
