package room

import (
	"strings"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room/preview"
)

// The previews and their confirmation are package preview's: the engine
// hands preview.Screen.Confirm what differs between an agent run's
// preview (run.go) and a chat message's (package chatlane), and answers a
// change to the user's files (/apply, /undo) with yesTo.

// Preview is one preview as a screen that answers it with a click shows
// it (the page of relay-baton serve).
type Preview = preview.Preview

// Answer is a Confirmer's answer to one preview.
type Answer = preview.Answer

// Confirmer is a Terminal that answers a preview as a whole rather than a
// typed line (the page: Run, Edit, Cancel).
type Confirmer = preview.Confirmer

// ErrStale is a confirmation refused because its preview no longer held:
// nothing ran, and the screen that asked previews the command again.
var ErrStale = preview.ErrStale

// confirmLoop previews text and asks on the engine's terminal until the
// answer is yes, no, or the preview fails (preview.Screen.Confirm).
func (e *Engine) confirmLoop(c preview.Confirmation, text string) (string, error) {
	return preview.Screen{Term: e.term, AutoYes: e.autoYes, Say: e.Say, AskLine: e.askLine}.Confirm(c, text)
}

// yes asks question unless --yes; false with nil when the answer is no.
func (e *Engine) yes(question string) (bool, error) {
	if e.autoYes {
		return true, nil
	}
	if e.term == nil {
		return false, ErrNeedYes
	}
	a, err := e.term.Ask(question)
	a = strings.ToLower(strings.TrimSpace(a))
	return err == nil && (a == "y" || a == "yes"), nil
}

// yesTo asks question about a change to the user's files that text
// describes (every path): a screen that answers previews with a click
// (a Confirmer, the page) is shown text as a preview of that change,
// named by its own id, and the change is made only on the click that
// names it; a terminal is asked question. kind is "apply", "undo",
// "discard" or "revert".
func (e *Engine) yesTo(kind, text, question string) (bool, error) {
	cf, ok := e.term.(Confirmer)
	if e.autoYes || !ok {
		return e.yes(question)
	}
	command := kind
	if kind == "discard" || kind == "revert" {
		command = "undo"
	}
	a := cf.Confirm(Preview{ID: kind + "-" + events.NewID(), Question: question, Command: command, Text: text, All: text, Change: kind})
	return a.Yes, nil
}
