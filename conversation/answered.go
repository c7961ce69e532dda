package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/transcript"
)

// A message posted to the messaging socket of a session no relay-baton
// hook reaches has no Stop hook to store its reply or to say its turn
// ended. The transcript says both, and relay-baton takes them from it:
//
//   - the post shows (a peer message line after the claim's offset): the
//     claim is confirmed at once, not at the end of the claim grace, and
//     answering/<id> is written with where the search began
//     ({transcript, offset, at}): the message's turn is under way;
//   - a turn end follows it (stop_reason end_turn): the turn's text is
//     stored as the reply (outbox/<id>.json, source "transcript") and the
//     mark goes. The next message, held until then (awaitingAnswer), is
//     posted by whichever lane looks next (send, the room, the page);
//   - a turn that ends with no end in the transcript (the user pressed
//     Esc, the API failed): once the mark is older than staleAfter, Claude
//     Code's registry saying the session is idle, or no longer listing it,
//     ends it too, with no reply stored.
//
// Where relay-baton's hooks are installed none of this is done: the
// UserPromptSubmit hook marks the message (an empty mark) and the Stop hook
// stores the reply, as before.

// answerMark is the content of a transcript-made answering/<id>.
type answerMark struct {
	Transcript string    `json:"transcript"`
	Offset     int64     `json:"offset"`
	At         time.Time `json:"at"`
}

// markShown records that message id, posted to the socket, showed in the
// transcript at path (searched from off): its turn is under way. Only for
// a session no hook reaches: where the hooks are installed their
// UserPromptSubmit and Stop hooks mark and store as before. An existing
// mark is kept; a stored reply means the turn is over already.
func markShown(s *Session, id, path string, off int64) {
	if path == "" || validMessageID(id) != nil || checkDir(s.dir) != nil || !s.HooklessOnly() {
		return
	}
	if _, err := os.Lstat(s.outboxPath(id)); err == nil {
		return
	}
	d := s.path(answeringName)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	if checkDir(d) != nil {
		return
	}
	b, _ := json.Marshal(answerMark{Transcript: path, Offset: off, At: time.Now().UTC().Truncate(time.Millisecond)})
	f, err := safeio.OpenChecked(filepath.Join(d, id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600, true)
	if err != nil {
		return // marked already (the hooks, or another reader)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr != nil || cerr != nil {
		s.RecordError(fmt.Errorf("mark message %s as answering: %w", id, errors.Join(werr, cerr)))
	}
}

// readAnswerMark reads answering/<id>; ok is false for a hooks' (empty)
// mark or none.
func readAnswerMark(s *Session, id string) (answerMark, bool) {
	b, err := safeio.ReadOwned(filepath.Join(s.path(answeringName), id), 4<<10)
	if err != nil || len(b) == 0 {
		return answerMark{}, false
	}
	var m answerMark
	if json.Unmarshal(b, &m) != nil || m.Transcript == "" || !filepath.IsAbs(m.Transcript) {
		return answerMark{}, false
	}
	return m, true
}

// turnScans are this process's looks at the turns of the messages it
// delivered: each look reads only what a transcript gained since the last.
var turnScans transcript.Turns

// turnOf reads the transcript at path from off: whether message id shows
// there, whether a turn end follows it, and the text the model wrote in
// between (transcript.Turns.Look).
func turnOf(path string, off int64, id string) (shown, ended bool, text string, err error) {
	return turnScans.Look(path, off, "chat message "+id+" ")
}

// lookMode says what a look at a turn may do to learn whether it ended:
// ask Claude Code's registry, which can start `claude agents --json` (a
// lane about to post, a send), or only read the answer an earlier call
// left (a view: Reachability, the targets; it starts no process).
type lookMode bool

const (
	mayRun     lookMode = true
	cachedOnly lookMode = false
)

// defaultAnswerStale is how old a transcript-made mark must be before the
// registry's word ends it (longer than claudecode.RegistryTTL, so that the registry's
// answer was read after the turn began). Session.answerStale overrides it
// (a test's).
const defaultAnswerStale = 10 * time.Second

func staleAfter(s *Session) time.Duration {
	if s.answerStale > 0 {
		return s.answerStale
	}
	return defaultAnswerStale
}

// answerState says whether the transcript-made mark of id still stands:
// ended when the transcript shows its turn's end (text: the turn's
// text) or, past staleAfter, Claude Code's registry says the session is
// idle or gone. A cachedOnly look takes the registry's word only from an
// answer read late enough into the turn (as a new call's would be).
func answerState(s *Session, id string, m answerMark, now time.Time, mode lookMode) (ended bool, text string) {
	_, ended, text, _ = turnOf(m.Transcript, m.Offset, id)
	stale := staleAfter(s)
	if ended || now.Sub(m.At) < stale {
		return ended, text
	}
	var list []claudecode.Session
	if mode == mayRun {
		l, err := claudecode.Registry(context.Background())
		if err != nil {
			return false, ""
		}
		list = l
	} else {
		l, at, ok := claudecode.CachedRegistry()
		if !ok || at.Sub(m.At) < stale-claudecode.RegistryTTL {
			return false, ""
		}
		list = l
	}
	for _, l := range list {
		if l.SessionID == s.ID {
			return l.Status == claudecode.StatusIdle, text
		}
	}
	return true, text // no longer running
}

// settleAnswers ends each transcript-made mark whose turn ended (see the
// top of this file): the reply stored, the mark removed. Its cost with
// nothing marked is one directory read.
func settleAnswers(s *Session, now time.Time) {
	names, err := safeio.ReadDirNames(s.path(answeringName))
	if err != nil {
		return
	}
	for _, id := range names {
		if validMessageID(id) != nil {
			continue
		}
		m, ok := readAnswerMark(s, id)
		if !ok {
			continue
		}
		if ended, text := answerState(s, id, m, now, mayRun); ended {
			endAnswer(s, id, text)
		}
	}
}

// endAnswer ends the turn of message id seen in the transcript: text
// becomes its reply unless one is stored, and a transcript-made mark
// goes (a hooks' mark is the Stop hook's to remove).
func endAnswer(s *Session, id, text string) {
	if validMessageID(id) != nil {
		return
	}
	if _, ok := readAnswerMark(s, id); !ok {
		return
	}
	if err := storeReply(s, id, capReply(text), "transcript"); err != nil {
		s.RecordError(fmt.Errorf("store the reply to %s from the transcript: %w", id, err))
	}
	os.Remove(filepath.Join(s.path(answeringName), id))
}

// AwaitPost waits until r's message leaves the inbox, posting it itself to
// the session's socket as soon as it is first in line and the earlier
// message it waits behind is answered (Receipt.Behind): what a plain send
// to a session no relay-baton hook reaches does, since nothing else would
// post it. It returns the delivered record; nil when the message left the
// inbox undelivered (cancelled). It ends with ctx (ctx.Err()) or with the
// session's process (ErrSessionGone).
func AwaitPost(ctx context.Context, r Receipt, poll time.Duration) (*Message, error) {
	if poll <= 0 {
		poll = 250 * time.Millisecond // each look is a directory read and a transcript tail
	}
	p, _ := r.Session.Process()
	alive, gone := procfacts.WhileAlive(ctx, p, procfacts.System, poll)
	defer gone()
	m, err := waitDelivered(alive, r.Session, r.Message.ID, poll, func(Update) {}, deliveryNudge(alive, r))
	if err != nil && ctx.Err() == nil && alive.Err() != nil {
		return nil, ErrSessionGone
	}
	return m, err
}

// ErrSessionGone: the session's process ended while a message waited for
// it.
var ErrSessionGone = errors.New("the session's process ended")
