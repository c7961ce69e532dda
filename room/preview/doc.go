// Package preview is what the room shows before anything runs and how it
// asks: the preview card a clicking screen answers (Preview, Answer,
// Confirmer), the one "preview, ask, edit" loop every agent run, chat
// message and change to the user's files goes through (Screen.Confirm:
// y, n, v, e; a Confirmer's Run, Edit, Cancel; no terminal without --yes
// is ErrNeedYes), the prompt's lines as a short preview shows them (its
// first and last lines with the user's task between, sentences joined
// into paragraphs) and the editor the e answer opens (EditText). It knows
// no agent run and no log: the engine (package room) hands a Confirmation
// the functions that preview, log and decline.
package preview
