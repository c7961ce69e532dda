package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsnotify/fsnotify"

	"github.com/relay-baton/relay-baton/safeio"
)

// The reply, from the Stop hook. Claude Code's Stop payload carries
// last_assistant_message, the final text of the turn (its hook
// documentation points hooks at it rather than at the transcript, which is
// written asynchronously). The hooks mark each message as it reaches the
// model, in answering/<id>:
//
//   - the Stop hook, when it blocks with the message;
//   - the asyncRewake waiter, when it exits with it;
//   - the UserPromptSubmit hook, whose prompt carries the framed message
//     (Claude Code runs it for a message from the messaging socket, both
//     when it starts a turn and when a busy turn takes it in at a tool
//     result).
//
// The next Stop hook stores its last_assistant_message as
// outbox/<id>.json for every marked message, unless the session wrote one
// itself, and removes the marks. Follow shows that text as the reply.

// answeringDir holds the marks of messages whose turn has not ended yet.
// maxReply caps a stored reply (the full text stays in the transcript).
const maxReply = 256 << 10

// chatMarker starts every framed chat message (prompts.FrameChat).
const chatMarker = "[relay-baton chat message "

// markAnswering records that message id reached the model: the next Stop
// hook stores its turn's last text as the reply.
func markAnswering(s *Session, id string) error {
	if err := validMessageID(id); err != nil {
		return err
	}
	if err := checkDir(s.dir); err != nil {
		return err
	}
	d := s.path(answeringName)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := checkDir(d); err != nil {
		return err
	}
	f, err := safeio.OpenChecked(filepath.Join(d, id), os.O_CREATE|os.O_WRONLY, 0o600, true)
	if err != nil {
		return err
	}
	return f.Close()
}

// answering reports whether message id is marked as reaching the model
// and its turn has not ended yet.
func answering(s *Session, id string) bool {
	if validMessageID(id) != nil {
		return false
	}
	_, err := os.Lstat(filepath.Join(s.path(answeringName), id))
	return err == nil
}

// chatIDs returns the ids of the framed chat messages in text.
func chatIDs(text string) []string {
	var ids []string
	for {
		i := strings.Index(text, chatMarker)
		if i < 0 {
			return ids
		}
		text = text[i+len(chatMarker):]
		id, _, _ := strings.Cut(text, " ")
		if isMessageID(id) {
			ids = append(ids, id)
		}
	}
}

// storedReply is outbox/<id>.json as the Stop hook writes it (a session
// that writes its own reply writes {id, text}).
type storedReply struct {
	ID     string    `json:"id"`
	Text   string    `json:"text"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
}

// storeReplies is the Stop hook's first step: text (last_assistant_message)
// becomes the reply of every message marked in answering/ that was
// delivered and has no reply yet; the marks go. Its cost when nothing is
// marked is one directory read.
func storeReplies(s *Session, text string) {
	names, err := safeio.ReadDirNames(s.path(answeringName))
	if err != nil || len(names) == 0 {
		return
	}
	text = capReply(text)
	for _, id := range names {
		mark := filepath.Join(s.path(answeringName), id)
		if validMessageID(id) != nil {
			os.Remove(mark)
			continue
		}
		if err := storeReply(s, id, text, "stop hook"); err != nil {
			s.RecordError(fmt.Errorf("hook stop: store the reply to %s: %w", id, err))
		}
		os.Remove(mark)
	}
}

// capReply cuts a reply over maxReply at a rune boundary, saying how much
// more the transcript has.
func capReply(text string) string {
	if len(text) <= maxReply {
		return text
	}
	cut := maxReply
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("… [%d more bytes in the session's transcript]", len(text)-cut)
}

// storeReply writes outbox/<id>.json with text from source (the stop
// hook, or the transcript) unless a reply is stored already.
func storeReply(s *Session, id, text, source string) error {
	if strings.TrimSpace(text) == "" {
		return nil // a turn without text: the transcript has what there is
	}
	if fi, err := os.Lstat(s.DeliveredPath(id)); err != nil || !fi.Mode().IsRegular() {
		return nil // not a message of this session (a prompt that quoted a frame)
	}
	if _, err := os.Lstat(s.outboxPath(id)); err == nil {
		if own, ok := s.Reply(id); ok {
			logReplyOnce(s, id, own, "outbox") // the session wrote its own
		}
		return nil
	}
	if err := checkDir(s.OutboxDir()); err != nil {
		return err
	}
	b, err := json.Marshal(storedReply{ID: id, Text: text, Source: source, At: time.Now().UTC().Truncate(time.Millisecond)})
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.OutboxDir(), id+".json", b, false); err != nil {
		return err
	}
	logReplyOnce(s, id, text, source) // a plain send's reply too, with no follower
	return nil
}

// replyWait bounds how long Follow waits, at the end of the turn that
// answered a message, for the Stop hook to store the reply (it runs a
// moment after the transcript shows the turn's end: 0.25 s measured). The
// wait ends as soon as the reply or the mark's removal shows; past the
// bound (no Stop hook came: a session that crashed at its turn's end) the
// transcript's text is the reply.
const replyWait = 3 * time.Second

// waitReply waits for outbox/<id>.json while id is marked as answering
// (the Stop hook is about to store its reply). ok=false: no stored reply.
func waitReply(s *Session, ctx context.Context, id string, limit time.Duration) (string, bool) {
	if text, ok := s.Reply(id); ok || !answering(s, id) {
		return text, ok
	}
	var wake <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer closeWatcher(w)
		if w.Add(s.OutboxDir()) == nil {
			_ = w.Add(s.path(answeringName))
			wake = w.Events
		}
	}
	guard := time.NewTimer(limit)
	defer guard.Stop()
	tick := time.NewTicker(250 * time.Millisecond) // where fsnotify is missing
	defer tick.Stop()
	for {
		if text, ok := s.Reply(id); ok {
			return text, true
		}
		if !answering(s, id) {
			return s.Reply(id) // stored and unmarked between the two looks
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-guard.C:
			return "", false
		case <-tick.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		}
	}
}
