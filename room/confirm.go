package room

import (
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room/preview"
	"github.com/relay-baton/relay-baton/room/runlock"
	"github.com/relay-baton/relay-baton/room/worktrack"
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

// previews is the engine's part that shows what would run and asks: an
// agent run's preview (its text, its card, its prompt_preview event), the
// one confirmation loop on the engine's terminal or a Confirmer's click
// (package preview), the confirmation of a change to the user's files,
// and a diff shown on that terminal. It is handed what it needs of the
// engine as fields.
type previews struct {
	term       Terminal // nil: confirmations need autoYes
	autoYes    bool     // --yes: confirm every preview
	out        *printer
	runner     Runner
	wt         *worktrack.Tracker // where a run works (the preview's line about it)
	convs      *agentConvs        // what a run continues
	lock       *runlock.Lock      // nothing is previewed while another screen's run holds the repository
	sessionDir string             // .ai-session: a long prompt is kept in prompts/
	now        func() time.Time
	passEnv    func() []string // the variables passed on purpose (--allow-env, /allow-env)
	say        func(format string, a ...any)
	emit       func(role events.Role, text string, refs map[string]string, meta events.Meta) string
}

// confirmLoop previews text and asks on the engine's terminal until the
// answer is yes, no, or the preview fails (preview.Screen.Confirm).
func (pv *previews) confirmLoop(c preview.Confirmation, text string) (string, error) {
	return preview.Screen{Term: pv.term, AutoYes: pv.autoYes, Say: pv.say, AskLine: pv.askLine}.Confirm(c, text)
}

// yes asks question unless --yes; false with nil when the answer is no.
// On a terminal that takes the answer as one key the question says so.
func (pv *previews) yes(question string) (bool, error) {
	if pv.autoYes {
		return true, nil
	}
	if pv.term == nil {
		return false, ErrNeedYes
	}
	if k, ok := pv.term.(interface{ OneKey() bool }); ok && k.OneKey() {
		question = strings.TrimRight(question, " ") + " (one key, no Enter) "
	}
	a, err := pv.term.Ask(question)
	a = strings.ToLower(strings.TrimSpace(a))
	return err == nil && (a == "y" || a == "yes"), nil
}

// yesTo asks question about a change to the user's files that text
// describes (every path): a screen that answers previews with a click
// (a Confirmer, the page) is shown text as a preview of that change,
// named by its own id, and the change is made only on the click that
// names it; a terminal is asked question. kind is "apply", "undo",
// "discard" or "revert".
func (pv *previews) yesTo(kind, text, question string) (bool, error) {
	cf, ok := pv.term.(Confirmer)
	if pv.autoYes || !ok {
		return pv.yes(question)
	}
	command := kind
	if kind == "discard" || kind == "revert" {
		command = "undo"
	}
	a := cf.Confirm(Preview{ID: kind + "-" + events.NewID(), Question: question, Command: command, Text: text, All: text, Change: kind})
	return a.Yes, nil
}
