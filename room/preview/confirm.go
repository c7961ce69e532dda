package preview

import (
	"errors"
	"strings"
)

// Confirmation is what differs between the room's "preview, ask, edit"
// loops: an agent run ("run this?") and a chat message to the orchestrator
// ("send this?"). The loop itself, and so the answers it takes and what it
// does without a terminal, is one: Screen.Confirm.
type Confirmation struct {
	Question string // asked after each preview, e.g. "run this? [y/N/e] "
	Verb     string // what y does, for the keys' hint: "runs", "sends"
	Noun     string // what an edit changes ("prompt", "message"), for an empty edit
	// Preview shows text (edited once the user has edited it), shortly,
	// and logs its prompt_preview event; it returns that event's id, or
	// an error that ends the loop as it is (Preview logs it).
	Preview func(text string, edited bool) (previewID string, err error)
	// View shows all of it (the answer v); nothing is logged.
	View func(text string)
	// Confirmed logs a yes (typed, or --yes).
	Confirmed func(previewID string)
	// Declined tells the user and logs why nothing happens.
	Declined func(previewID, why string)
	// Card is the preview as a Confirmer shows it (the short and the
	// whole text, and the facts of the run or the message).
	Card func(text string) Preview
}

// Screen is where a confirmation is asked: the engine's terminal (nil:
// none), --yes, how it says a line, and the line a question is asked on
// (the question and its keys' hint, fitted to the terminal's width).
type Screen struct {
	Term    Terminal
	AutoYes bool
	Say     func(format string, a ...any)
	AskLine func(question, hint string) string
}

// Preview is one preview as a screen that answers it with a click shows
// it (the page of relay-baton serve): the same text the terminal prints,
// the whole view its v shows, and the facts a screen sets apart.
type Preview struct {
	ID       string   `json:"id"` // the prompt_preview event's id
	Question string   `json:"question"`
	Command  string   `json:"command"`
	Agent    string   `json:"agent"`
	Role     string   `json:"role,omitempty"`
	Text     string   `json:"text"` // the short preview, as the terminal prints it
	All      string   `json:"all"`  // the whole preview (the terminal's v)
	Prompt   string   `json:"prompt"`
	Argv     string   `json:"argv,omitempty"`
	Cwd      string   `json:"cwd,omitempty"`
	Policy   string   `json:"policy,omitempty"`
	Stripped []string `json:"stripped,omitempty"` // credentials held back
	Passed   []string `json:"passed,omitempty"`   // credentials passed on purpose
	Lane     string   `json:"lane,omitempty"`     // chat: the session the message goes to
	Edited   bool     `json:"edited,omitempty"`
	// Change is set on a preview of a change to the user's files rather
	// than an agent run: "apply", "undo", "discard" or "revert" (/apply,
	// /undo). It runs on Yes and is not edited; Text lists every path.
	Change string `json:"change,omitempty"`
}

// Answer is a Confirmer's answer to one preview: Yes runs it; Edited (not
// empty) is a new text, previewed again; Stale says why the preview no
// longer holds (it is declined as that, and the command asked again);
// anything else is a no, for Why ("declined" when empty).
type Answer struct {
	Yes    bool
	Edited string
	Stale  string
	Why    string
}

// Confirmer is a Terminal that answers a preview as a whole rather than a
// typed line (the page: Run, Edit, Cancel). confirmLoop hands it every
// preview instead of asking its question.
type Confirmer interface {
	Confirm(p Preview) Answer
}

// Terminal is how the engine talks to a person: it asks a question and
// reads one answer line, and lets them edit a prompt. The REPL implements
// it with readline; one-shot commands with a line reader.
type Terminal interface {
	Ask(question string) (string, error)
	Edit(text string) (string, error)
}

var (
	// ErrDeclined: the user did not confirm; nothing ran.
	ErrDeclined = errors.New("cancelled. nothing ran.")
	// ErrNeedYes: confirmation needed but there is no terminal to ask.
	ErrNeedYes = errors.New("stdin is not a terminal: pass --yes to run without the confirmation prompt")
)

// ErrStale is a confirmation refused because its preview no longer held
// (the plan or HEAD changed before the click): nothing ran, and the
// screen that asked previews the command again.
var ErrStale = errors.New("the preview is stale: nothing ran")

// Confirm previews text and asks c.Question until the answer is yes
// (it returns the text, edited or not), no or anything else (ErrDeclined),
// v (the whole preview, then ask again) or e (edit, then preview and ask
// again). Without a terminal and without
// --yes it returns ErrNeedYes. An edit that fails or leaves nothing is a
// no. Every end but a preview error is logged through c.
func (s Screen) Confirm(c Confirmation, text string) (string, error) {
	edited, askAgain := false, false
	var previewID string
	for {
		if !askAgain {
			var err error
			if previewID, err = c.Preview(text, edited); err != nil {
				return text, err
			}
		}
		askAgain = false
		answer := "y"
		if cf, ok := s.Term.(Confirmer); ok && !s.AutoYes && c.Card != nil {
			p := c.Card(text)
			p.ID, p.Question, p.Edited = previewID, c.Question, edited
			a := cf.Confirm(p)
			switch {
			case a.Yes:
				c.Confirmed(previewID)
				return text, nil
			case strings.TrimSpace(a.Edited) != "":
				text, edited = strings.TrimRight(a.Edited, "\n"), true
				continue
			case a.Stale != "":
				c.Declined(previewID, "stale: "+a.Stale)
				return text, ErrStale
			}
			why := a.Why
			if why == "" {
				why = "declined"
			}
			c.Declined(previewID, why)
			return text, ErrDeclined
		}
		if !s.AutoYes {
			if s.Term == nil {
				c.Declined(previewID, "no terminal to confirm on")
				return text, ErrNeedYes
			}
			for {
				a, err := s.Term.Ask(s.AskLine(c.Question, keysHint(s.Term, c.Verb)))
				if err != nil {
					a = ""
				}
				answer = strings.ToLower(strings.TrimSpace(a))
				if (answer != "v" && answer != "view") || c.View == nil {
					break
				}
				c.View(text) // then asked again
			}
		}
		switch answer {
		case "y", "yes":
			c.Confirmed(previewID)
			return text, nil
		case "e", "edit":
			t, err := s.Term.Edit(text)
			if errors.Is(err, ErrNoEditor) {
				// Nothing was edited and nothing is cancelled: say why and
				// ask the same question about the same preview again.
				s.Say("%v; answer y for the %s as shown, anything else cancels.", err, c.Noun)
				askAgain = true
				continue
			}
			if err != nil {
				s.Say("edit failed: %v", err)
				c.Declined(previewID, "edit failed")
				return text, ErrDeclined
			}
			if strings.TrimSpace(t) == "" {
				s.Say("the edited %s is empty.", c.Noun)
				c.Declined(previewID, "empty "+c.Noun+" after edit")
				return text, ErrDeclined
			}
			text, edited = strings.TrimRight(t, "\n"), true
		default:
			c.Declined(previewID, "declined")
			return text, ErrDeclined
		}
	}
}

// oneKeyTerminal is a Terminal that can take an answer as one key, without
// Enter (the room's line editor on a raw terminal).
type oneKeyTerminal interface {
	OneKey() bool
}

// keysHint says, after a confirmation's [y/N/e], which key does what and
// whether Enter is needed.
func keysHint(t Terminal, verb string) string {
	if k, ok := t.(oneKeyTerminal); ok && k.OneKey() {
		return "y " + verb + ", v views all, e edits (one key, no Enter) "
	}
	return "y " + verb + ", v views all, e edits, then Enter "
}
