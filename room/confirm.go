package room

import (
	"errors"
	"strings"
)

// confirmation is what differs between the room's "preview, ask, edit"
// loops: an agent run ("run this?") and a chat message to the orchestrator
// ("send this?"). The loop itself, and so the answers it takes and what it
// does without a terminal, is one: (*Engine).confirmLoop.
type confirmation struct {
	question string // asked after each preview, e.g. "run this? [y/N/e] "
	verb     string // what y does, for the keys' hint: "runs", "sends"
	noun     string // what an edit changes ("prompt", "message"), for an empty edit
	// preview shows text (edited once the user has edited it), shortly,
	// and logs its prompt_preview event; it returns that event's id, or
	// an error that ends the loop as it is (preview logs it).
	preview func(text string, edited bool) (previewID string, err error)
	// view shows all of it (the answer v); nothing is logged.
	view func(text string)
	// confirmed logs a yes (typed, or --yes).
	confirmed func(previewID string)
	// declined tells the user and logs why nothing happens.
	declined func(previewID, why string)
}

// confirmLoop previews text and asks c.question until the answer is yes
// (it returns the text, edited or not), no or anything else (ErrDeclined),
// v (the whole preview, then ask again) or e (edit, then preview and ask
// again). Without a terminal and without
// --yes it returns ErrNeedYes. An edit that fails or leaves nothing is a
// no. Every end but a preview error is logged through c.
func (e *Engine) confirmLoop(c confirmation, text string) (string, error) {
	edited, askAgain := false, false
	var previewID string
	for {
		if !askAgain {
			var err error
			if previewID, err = c.preview(text, edited); err != nil {
				return text, err
			}
		}
		askAgain = false
		answer := "y"
		if !e.autoYes {
			if e.term == nil {
				c.declined(previewID, "no terminal to confirm on")
				return text, ErrNeedYes
			}
			for {
				a, err := e.term.Ask(e.askLine(c.question, keysHint(e.term, c.verb)))
				if err != nil {
					a = ""
				}
				answer = strings.ToLower(strings.TrimSpace(a))
				if (answer != "v" && answer != "view") || c.view == nil {
					break
				}
				c.view(text) // then asked again
			}
		}
		switch answer {
		case "y", "yes":
			c.confirmed(previewID)
			return text, nil
		case "e", "edit":
			t, err := e.term.Edit(text)
			if errors.Is(err, ErrNoEditor) {
				// Nothing was edited and nothing is cancelled: say why and
				// ask the same question about the same preview again.
				e.Say("%v; answer y for the %s as shown, anything else cancels.", err, c.noun)
				askAgain = true
				continue
			}
			if err != nil {
				e.Say("edit failed: %v", err)
				c.declined(previewID, "edit failed")
				return text, ErrDeclined
			}
			if strings.TrimSpace(t) == "" {
				e.Say("the edited %s is empty.", c.noun)
				c.declined(previewID, "empty "+c.noun+" after edit")
				return text, ErrDeclined
			}
			text, edited = strings.TrimRight(t, "\n"), true
		default:
			c.declined(previewID, "declined")
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
