package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/safeio"
)

// Sessions that need their user. Claude Code's Notification hook reports
// a session that waits for a permission answer (notification_type
// "permission_prompt") or for an answer to a question ("elicitation_dialog").
// `hook notify` records it in attention.json; the UserPromptSubmit, Stop
// and SessionStart hooks clear it, and so does the session moving on: a
// record older than the session's transcript's last write (the answer
// given, a tool's result) no longer counts. targets, the room and the page
// say "waiting for its user", so a queued message is never a mystery.

const attentionName = "attention.json"

// Attention is attention.json.
type Attention struct {
	Type    string    `json:"type"`    // notification_type
	Message string    `json:"message"` // Claude Code's words ("Claude needs your permission")
	At      time.Time `json:"at"`
}

// attentionTypes are the notification types that mean the session waits
// for its user (idle_prompt, auth_success and others do not).
var attentionTypes = map[string]string{
	"permission_prompt":  "a permission prompt",
	"elicitation_dialog": "a question",
}

// What names the wait in a few words ("a permission prompt").
func (a Attention) What() string {
	if w, ok := attentionTypes[a.Type]; ok {
		return w
	}
	return "an answer"
}

// recordAttention writes attention.json (0600, never through a link).
func (s *Session) recordAttention(a Attention) error {
	if err := checkDir(s.dir); err != nil {
		return err
	}
	if a.At.IsZero() {
		a.At = time.Now().UTC().Truncate(time.Millisecond)
	}
	a.Message = render.Cut(render.InertLine(a.Message), 200) // a hook payload: no control byte kept
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.dir, attentionName, append(b, '\n'), false)
}

// clearAttention removes attention.json (the session moved on). Cheap: one
// unlink.
func (s *Session) clearAttention() {
	if err := os.Remove(s.path(attentionName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.RecordError(fmt.Errorf("remove %s: %w", attentionName, err))
	}
}

// NeedsUser reports whether the session waits for its user now: a record
// in attention.json that the transcript has not moved past (transcript is
// the session's transcript, "" when unknown).
func (s *Session) NeedsUser(transcript string) (Attention, bool) {
	b, err := safeio.ReadOwned(s.path(attentionName), 64<<10)
	if err != nil {
		return Attention{}, false
	}
	var a Attention
	if json.Unmarshal(b, &a) != nil || a.At.IsZero() {
		return Attention{}, false
	}
	if transcript != "" {
		if fi, err := os.Stat(transcript); err == nil && fi.ModTime().After(a.At) {
			return Attention{}, false // the session wrote after it: it moved on
		}
	}
	return a, true
}

// HookNotify is the Notification hook's decision: it records a session
// waiting for its user (permission_prompt, elicitation_dialog) in
// attention.json. Other notifications change nothing.
func HookNotify(s *Session, p HookPayload) {
	if _, ok := attentionTypes[p.NotificationType]; !ok {
		return
	}
	if err := s.Ensure(); err != nil {
		s.RecordError(fmt.Errorf("hook notify: %w", err))
		return
	}
	if err := s.recordAttention(Attention{Type: p.NotificationType, Message: p.Message}); err != nil {
		s.RecordError(fmt.Errorf("hook notify: %w", err))
	}
}
