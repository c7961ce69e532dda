package conversation

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// The session-chat file protocol, one folder per session:
//
//	<workspace>/.claude/session-chat/<sessionId>/
//	  inbox/<epochMs>-<id>.json   pending {id, from, text, createdAt}
//	  delivered/<id>.json         claimed: + {lane, claimedAt}, then deliveredAt
//	  claims/<id>.json            a claim in progress (claims.go)
//	  rejected/<name>             inbox files that could not be read
//	  outbox/<id>.json            optional explicit reply {id, text}
//	  log.jsonl                   derived chat log (a cache)
//	  session.json                registration (transcript path, cwd)
//	  busy                        the session is in a turn (UserPromptSubmit)
//	  wait.lock                   held by the one asyncRewake waiter
//	  errors.log                  internal errors of the hooks
//
// Any producer may enqueue: write a temporary file in inbox/ whose name
// starts with "." and rename it to <epochMs>-<id>.json.

// MaxMessageBytes caps a message's text.
const MaxMessageBytes = 64 << 10

// maxInboxFile caps an inbox file: the text plus JSON escaping and fields.
const maxInboxFile = 8*MaxMessageBytes + 4096

// busyTTL is how long a busy mark counts: a turn that ends without a Stop
// event (a crash, a kill) must not strand the idle lane forever.
const busyTTL = 2 * time.Hour

// Lane says which lane claimed a message.
type Lane string

// The lanes.
const (
	LaneHook    Lane = "hook"    // the Stop hook, at a turn boundary
	LaneRewake  Lane = "rewake"  // the asyncRewake waiter (hook wait), while idle
	LaneMonitor Lane = "monitor" // relay-baton wait, armed by the Monitor tool
	LaneSocket  Lane = "socket"  // posted to the session's messaging socket (socket.go): between tool calls, or at once when idle
)

// Message is one chat message file.
type Message struct {
	ID          string     `json:"id"`
	From        string     `json:"from"`
	Text        string     `json:"text"`
	CreatedAt   time.Time  `json:"createdAt"`
	DeliveredAt *time.Time `json:"deliveredAt,omitempty"`
	Lane        Lane       `json:"lane,omitempty"`
	// ClaimedAt is when Lane claimed it; without DeliveredAt the claim is
	// still in progress (or its claimer died: recoverClaims).
	ClaimedAt *time.Time `json:"claimedAt,omitempty"`
	// Deliveries counts earlier deliveries that never reached the session
	// (put back in the inbox by recoverClaims).
	Deliveries int `json:"deliveries,omitempty"`
	// SocketPost is an earlier post of the message to the session's
	// messaging socket that did not show in the transcript within the
	// claim grace (the message was put back in the inbox for the hook
	// lanes): where to look for it showing late.
	SocketPost *SocketPost `json:"socketPost,omitempty"`
	// GaveUp is when recoverClaims stopped handing the message over: its hook
	// lane handed it over maxDeliveries times through its documented
	// output and the transcript never showed it. It counts as delivered by
	// that output; this mark (and errors.log) says it was never seen.
	GaveUp *time.Time `json:"gaveUp,omitempty"`
	// Inbox is the inbox file name Enqueue wrote (not stored in the file).
	Inbox string `json:"-"`
}

// Errors callers may test for.
var (
	ErrBadSessionID = errors.New("session id must be a UUID (8-4-4-4-12 hex digits)")
	ErrSymlink      = errors.New("refusing a symlinked session-chat folder (a link could redirect messages elsewhere): remove the link; the SessionStart hook recreates the folder")
	errLinkedFolder = errors.New("is a symlink: relay-baton writes no chat folder, message or log through a linked .claude or .claude/session-chat (a cloned repository could point it anywhere); replace the link with a real folder")
	ErrNotUTF8      = errors.New("message is not valid UTF-8: re-encode the text as UTF-8 (for example with iconv -t UTF-8) and send it again")
	ErrTooLarge     = fmt.Errorf("message is over %d KB: send a shorter message, or write the text to a file and send its path", MaxMessageBytes>>10)
	ErrEmpty        = errors.New("message is empty")
	ErrNUL          = errors.New("message contains a NUL byte (\\0), which no session can take: nothing was queued; remove it and send the text again")
	ErrNotChatReady = errors.New("session is not chat-capable (no inbox): it was started before `relay-baton hook install`, or never ran the SessionStart hook")
	errNoSession    = errors.New("no Claude Code session")
	ErrNotQueued    = errors.New("message is not in the inbox (already delivered, cancelled or unknown)")
	errBadMessageID = errors.New("bad message id")
)

// isMessageID: a letter or digit, then letters, digits, '_' or '-'; at most 64.
func isMessageID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ValidSessionID reports whether id is UUID-shaped; nothing else may become
// a path component.
func ValidSessionID(id string) error {
	if !sessionid.IsUUID(id) {
		return fmt.Errorf("%q: %w", render.Cut(id, 80), ErrBadSessionID)
	}
	return nil
}

func validMessageID(id string) error {
	if !isMessageID(id) {
		return fmt.Errorf("%q: %w (letters, digits, _ and -, at most 64)", render.Cut(id, 80), errBadMessageID)
	}
	return nil
}

// Session is one session's chat folder. It is cheap to make; nothing is
// created until Ensure or Enqueue.
type Session struct {
	Workspace string
	ID        string
	dir       string
	// answerStale, when set, replaces defaultAnswerStale (answered.go).
	answerStale time.Duration
}

// OpenSession validates id and returns the session's chat folder handle.
func OpenSession(dir, id string) (*Session, error) {
	if err := ValidSessionID(id); err != nil {
		return nil, err
	}
	ws, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Session{Workspace: ws, ID: id, dir: filepath.Join(ws, workspace.ChatDir, id)}, nil
}

// Dir returns the session's chat folder.
func (s *Session) Dir() string { return s.dir }

// path is the file or folder name in the session's chat folder.
func (s *Session) path(name string) string { return filepath.Join(s.dir, name) }

// The files and folders of a session's chat folder the lanes keep (the
// inbox's are InboxDir and the others).
const (
	registrationName = "session.json"
	busyName         = "busy"
	answeringName    = "answering"
)

// InboxDir, DeliveredDir, OutboxDir, RejectedDir return the sub-folders.
func (s *Session) InboxDir() string     { return filepath.Join(s.dir, "inbox") }
func (s *Session) DeliveredDir() string { return filepath.Join(s.dir, "delivered") }
func (s *Session) OutboxDir() string    { return filepath.Join(s.dir, "outbox") }
func (s *Session) RejectedDir() string  { return filepath.Join(s.dir, "rejected") }

// LogPath returns log.jsonl.
func (s *Session) LogPath() string { return filepath.Join(s.dir, "log.jsonl") }

// DeliveredPath returns delivered/<id>.json.
func (s *Session) DeliveredPath(id string) string {
	return filepath.Join(s.DeliveredDir(), id+".json")
}

// outboxPath returns outbox/<id>.json.
func (s *Session) outboxPath(id string) string { return filepath.Join(s.OutboxDir(), id+".json") }

// checkDir refuses a symlink at p; a missing p is fs.ErrNotExist.
func checkDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", p, ErrSymlink)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}

// checkDirs refuses a symlink at <workspace>/.claude,
// <workspace>/.claude/session-chat or the session folder; a missing one is
// fs.ErrNotExist.
func checkChatDirs(s *Session) error {
	for _, d := range []string{filepath.Join(s.Workspace, ".claude"), filepath.Join(s.Workspace, workspace.ChatDir)} {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %w", d, errLinkedFolder)
		}
	}
	return checkDir(s.dir)
}

// check refuses a symlinked session folder or inbox, or a folder above
// them that is a link (checkDirs).
func checkSession(s *Session) error {
	if err := checkChatDirs(s); err != nil {
		return err
	}
	return checkDir(s.InboxDir())
}

// ChatCapable reports whether the session's inbox exists (and is sane).
func (s *Session) ChatCapable() bool { return checkSession(s) == nil }

// Ensure creates the session folder and its inbox, delivered, outbox and
// rejected folders (0700), refusing symlinks, a linked .claude or
// .claude/session-chat included.
func (s *Session) Ensure() error {
	if fi, err := os.Lstat(filepath.Join(s.Workspace, ".claude")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", filepath.Join(s.Workspace, ".claude"), errLinkedFolder)
	}
	for _, d := range []string{filepath.Join(s.Workspace, workspace.ChatDir), s.dir, s.InboxDir(), s.DeliveredDir(), s.OutboxDir(), s.RejectedDir(), s.ClaimsDir()} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			if errors.Is(err, fs.ErrNotExist) {
				if err := os.MkdirAll(d, 0o700); err != nil {
					return fmt.Errorf("create %s: %w", d, err)
				}
				continue
			}
			return fmt.Errorf("create %s: %w", d, err)
		}
		if d == filepath.Join(s.Workspace, workspace.ChatDir) {
			if err := checkChatDirs(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := checkDir(d); err != nil {
			return err
		}
	}
	workspace.EnsureIgnored(filepath.Join(s.Workspace, workspace.ChatDir))
	return nil
}

func newMessageID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeFileAtomic writes dir/name (mode 0600) with safeio.WriteFileAtomic.
func writeFileAtomic(dir, name string, data []byte, durable bool) error {
	return safeio.WriteFileAtomic(filepath.Join(dir, name), data, 0o600, durable)
}

// Enqueue writes a message into the inbox (temp file + rename) and returns
// it. from defaults to "relay-baton". The session must be chat-capable
// (Ensure it first to create the folders for a session not yet started).
func (s *Session) Enqueue(from, text string) (Message, error) {
	if strings.TrimSpace(text) == "" {
		return Message{}, ErrEmpty
	}
	if len(text) > MaxMessageBytes {
		return Message{}, fmt.Errorf("%d bytes: %w", len(text), ErrTooLarge)
	}
	if !utf8.ValidString(text) {
		return Message{}, ErrNotUTF8
	}
	if strings.IndexByte(text, 0) >= 0 {
		return Message{}, ErrNUL
	}
	if from = prompts.ChatFrom(from); from == "" {
		from = "relay-baton"
	}
	if err := checkSession(s); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Message{}, fmt.Errorf("session %s: %w", s.ID, ErrNotChatReady)
		}
		return Message{}, err
	}
	id := newMessageID()
	for range 8 { // an id never reused while its delivered file exists
		if _, err := os.Lstat(s.DeliveredPath(id)); errors.Is(err, fs.ErrNotExist) {
			break
		}
		id = newMessageID()
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	m := Message{ID: id, From: from, Text: text, CreatedAt: now}
	b, err := json.Marshal(m)
	if err != nil {
		return Message{}, err
	}
	// Names sort oldest first only to the millisecond (then by the random
	// id): the name's prefix goes past the newest pending message's, so one
	// producer's messages keep their order (createdAt stays the real time).
	ms := now.UnixMilli()
	if names, err := pending(s.InboxDir()); err == nil && len(names) > 0 {
		if last, err := strconv.ParseInt(strings.SplitN(names[len(names)-1], "-", 2)[0], 10, 64); err == nil && last >= ms {
			ms = last + 1
		}
	}
	name := fmt.Sprintf("%013d-%s.json", ms, id)
	if err := writeFileAtomic(s.InboxDir(), name, b, true); err != nil { // a crash never loses a queued message
		return Message{}, fmt.Errorf("enqueue into %s: %w%s", s.InboxDir(), err, workspace.WriteHint(err))
	}
	m.Inbox = name
	return m, nil
}

// pending lists inbox message file names, oldest first.
func pending(inbox string) ([]string, error) {
	names, err := safeio.ReadDirNames(inbox) // a FIFO there does not block
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// idFromName returns <id> of <epochMs>-<id>.json, or "".
func idFromName(name string) string {
	base := strings.TrimSuffix(name, ".json")
	if i := strings.IndexByte(base, '-'); i > 0 {
		return base[i+1:]
	}
	return ""
}

// hasPending reports cheaply (one directory read, and one of claims/)
// whether the inbox holds a message, after putting back the messages of
// claims that died before delivering (recoverClaims). A missing inbox is false
// with no error.
func (s *Session) hasPending() (bool, error) {
	recoverClaims(s)
	names, err := pending(s.InboxDir())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return len(names) > 0, err
}

// Rejected is an inbox file the claimer moved aside.
type Rejected struct {
	Name   string // the file's name in rejected/
	Reason string
}

// ClaimResult is what Claim did.
type ClaimResult struct {
	Message  Message
	OK       bool       // a message was claimed
	Rejected []Rejected // unreadable inbox files moved to rejected/ on the way

	held     *heldClaim // the claim marker, until Delivered
	handover bool
}

// Claim claims the oldest readable message for lane and records it as
// delivered: the caller hands it over itself, in this process. (The hooks
// use ClaimWith and Handover, so that a claimer killed before the hand-over
// leaves the message to be delivered again.)
func (s *Session) Claim(lane Lane) (ClaimResult, error) {
	res, err := s.ClaimWith(lane, ClaimOptions{})
	if res.OK {
		res.Delivered()
	}
	return res, err
}

// ClaimWith claims the oldest readable message for lane: it first records
// the claim in claims/<id>.json (locked while this process lives), then
// renames the inbox file to delivered/<id>.json (a lost rename race means
// another lane won: it tries the next), and rewrites that file with lane
// and claimedAt. The caller hands the message over, then calls
// res.Delivered. Claims whose claimer died are settled first (recoverClaims).
// Unparseable or oversized files are moved to rejected/ and reported. An
// empty or missing inbox is OK=false with no error.
func (s *Session) ClaimWith(lane Lane, o ClaimOptions) (ClaimResult, error) {
	res := ClaimResult{handover: o.Handover}
	recoverClaims(s)
	names, err := pending(s.InboxDir())
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(names) == 0) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if err := checkSession(s); err != nil {
		return res, err
	}
	for _, d := range []string{s.DeliveredDir(), s.ClaimsDir()} {
		if err := checkDir(d); errors.Is(err, fs.ErrNotExist) {
			if err := s.Ensure(); err != nil {
				return res, err
			}
		} else if err != nil {
			return res, err
		}
	}
	tpath := o.Transcript
	if !filepath.IsAbs(tpath) {
		tpath = ""
	}
	if tpath == "" && o.Handover {
		tpath = LocateTranscript(s)
	}
	offset := transcript.Size(tpath)
	for _, name := range names {
		src := filepath.Join(s.InboxDir(), name)
		id := idFromName(name)
		if validMessageID(id) != nil {
			if r, ok := reject(s, src, name, "file name is not <epochMs>-<id>.json"); ok {
				res.Rejected = append(res.Rejected, r)
			}
			continue
		}
		// Only a regular file is claimed: a FIFO renamed into delivered/
		// would then block the reader in open(2).
		if fi, err := os.Lstat(src); err == nil && !fi.Mode().IsRegular() {
			if r, ok := reject(s, src, name, safeio.FileKind(fi.Mode())+", not a message file"); ok {
				res.Rejected = append(res.Rejected, r)
			}
			continue
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		mk := claimMarker{ID: id, Lane: lane, PID: os.Getpid(), Inbox: name, ClaimedAt: now, Transcript: tpath, Offset: offset}
		held, err := newMarker(s, mk)
		if errors.Is(err, fs.ErrExist) {
			// A claim of this id is in progress, or one that died: settle
			// it, then try once more.
			recoverOne(s, id, false)
			held, err = newMarker(s, mk)
		}
		if err == nil {
			if _, err := os.Lstat(s.DeliveredPath(id)); err == nil {
				// With the claim of id held (nobody else moves it), a record
				// of id means a different message with the same id was
				// delivered before: keep both, under a unique name. (Looked
				// at before the claim, a message another lane was holding and
				// then put back would pass for one.)
				held.drop()
				id = id + "-" + strings.SplitN(name, "-", 2)[0]
				mk.ID = id
				held, err = newMarker(s, mk)
			}
		}
		if errors.Is(err, fs.ErrExist) {
			continue // another lane is on it
		}
		if err != nil {
			return res, fmt.Errorf("claim %s: record the claim: %w", name, err)
		}
		dst := s.DeliveredPath(id)
		switch err := filelock.RenameNoReplace(src, dst); {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			held.drop()
			continue // another lane won, or it was cancelled
		default:
			held.drop()
			return res, fmt.Errorf("claim %s: %w", name, err)
		}
		m, reason := readMessage(dst)
		if reason != "" {
			if r, ok := reject(s, dst, name, reason); ok {
				res.Rejected = append(res.Rejected, r)
			}
			held.drop()
			continue
		}
		m.ID = id
		if m.SocketPost != nil && socketPostShown(s, *m.SocketPost, id) {
			// Its earlier socket post showed after all: the session has it.
			// Counted as delivered by the socket, never handed over again.
			m.Lane, m.ClaimedAt, m.DeliveredAt = LaneSocket, &now, &now
			if err := writeRecord(s, m); err != nil {
				s.RecordError(fmt.Errorf("record the late delivery of %s: %w", id, err))
			}
			held.drop()
			s.RecordError(fmt.Errorf("message %s: its socket post of %s showed in the transcript after it had been put back in the inbox; counted as delivered via socket, not delivered again", id, m.SocketPost.At.Format(time.RFC3339Nano)))
			continue
		}
		m.Lane, m.ClaimedAt, m.DeliveredAt = lane, &now, nil
		if !o.Handover {
			m.DeliveredAt = &now // Claim: delivered with the claim (one record write)
		}
		if err := writeRecord(s, m); err != nil {
			s.RecordError(fmt.Errorf("record the claim of %s: %w", id, err))
		}
		res.Message, res.OK, res.held = m, true, held
		return res, nil
	}
	return res, nil
}

// readMessage reads and validates a message file; reason != "" when it is
// not a usable message.
func readMessage(p string) (Message, string) {
	f, err := safeio.OpenChecked(p, os.O_RDONLY, 0, true)
	if err != nil {
		if errors.Is(err, safeio.ErrNotRegular) {
			return Message{}, "not a regular file"
		}
		return Message{}, err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Message{}, err.Error()
	}
	if fi.Size() > maxInboxFile {
		return Message{}, fmt.Sprintf("file is %d bytes, over the cap", fi.Size())
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return Message{}, err.Error()
	}
	return parseMessage(b)
}

// parseMessage decodes and validates an inbox file's content; reason != ""
// when it is not a usable message.
func parseMessage(b []byte) (Message, string) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, "not a JSON message: " + err.Error()
	}
	if strings.TrimSpace(m.Text) == "" {
		return Message{}, "no text"
	}
	if strings.IndexByte(m.Text, 0) >= 0 {
		return Message{}, "text contains a NUL byte"
	}
	if len(m.Text) > MaxMessageBytes {
		return Message{}, fmt.Sprintf("text is %d bytes, over %d KB", len(m.Text), MaxMessageBytes>>10)
	}
	if m.From == "" {
		m.From = "dashboard"
	}
	return m, ""
}

// reject moves p into rejected/ and records why.
func reject(s *Session, p, name, reason string) (Rejected, bool) {
	_ = os.Mkdir(s.RejectedDir(), 0o700)
	dst := filepath.Join(s.RejectedDir(), strconv.FormatInt(time.Now().UnixNano(), 10)+"-"+filepath.Base(name))
	if err := os.Rename(p, dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Rejected{}, false // another claimer moved it
		}
		s.RecordError(fmt.Errorf("move unreadable %s aside: %w", name, err))
		return Rejected{}, false
	}
	s.RecordError(fmt.Errorf("inbox file %s moved to %s: %s", name, dst, reason))
	return Rejected{Name: filepath.Base(dst), Reason: reason}, true
}

// Cancel removes a message that is still in the inbox.
func (s *Session) Cancel(id string) error {
	if err := validMessageID(id); err != nil {
		return err
	}
	names, err := pending(s.InboxDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, n := range names {
		if idFromName(n) == id {
			if err := os.Remove(filepath.Join(s.InboxDir(), n)); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					break // claimed meanwhile
				}
				return err
			}
			return nil
		}
	}
	return fmt.Errorf("%s: %w", id, ErrNotQueued)
}

// QueueInfo is the inbox's depth and the oldest message's time.
type QueueInfo struct {
	Depth  int
	Oldest time.Time // zero when empty
}

// Age is how long the oldest message has waited.
func (q QueueInfo) Age(now time.Time) time.Duration {
	if q.Oldest.IsZero() {
		return 0
	}
	return now.Sub(q.Oldest)
}

// Queue reads the depth and the oldest message's age from file names only
// (one directory read, no file opened).
func (s *Session) Queue() (QueueInfo, error) {
	names, err := pending(s.InboxDir())
	if errors.Is(err, fs.ErrNotExist) {
		return QueueInfo{}, nil
	}
	if err != nil {
		return QueueInfo{}, err
	}
	q := QueueInfo{Depth: len(names)}
	if len(names) > 0 {
		if ms, err := strconv.ParseInt(strings.SplitN(names[0], "-", 2)[0], 10, 64); err == nil {
			q.Oldest = time.UnixMilli(ms)
		}
	}
	return q, nil
}

// State is where a message is.
type State struct {
	Queued    bool
	Ahead     int // messages before it in the inbox, when queued
	Delivered *Message
	// Incomplete: claimed (Delivered.Lane, Delivered.ClaimedAt) but not
	// handed over: its claimer is still at it, or died (Stalled), and the
	// next lane delivers it again.
	Incomplete bool
	Stalled    bool
	// Unconfirmed: handed over, and the claim waits for the transcript to
	// show the delivery (it is delivered again if it never does).
	Unconfirmed bool
}

// State finds message id: queued (with how many are ahead), delivered, or
// neither (ErrNotQueued: cancelled or unknown).
func (s *Session) State(id string) (State, error) {
	if err := validMessageID(id); err != nil {
		return State{}, err
	}
	names, err := pending(s.InboxDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return State{}, err
	}
	for i, n := range names {
		if idFromName(n) == id {
			return State{Queued: true, Ahead: i}, nil
		}
	}
	b, err := safeio.ReadOwned(s.DeliveredPath(id), maxInboxFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// The inbox listing and the rename race: look once more.
			if b, err = safeio.ReadOwned(s.DeliveredPath(id), maxInboxFile); err != nil {
				return State{}, fmt.Errorf("%s: %w", id, ErrNotQueued)
			}
		} else {
			return State{}, err
		}
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return State{}, fmt.Errorf("read %s: %w", s.DeliveredPath(id), err)
	}
	cs := claimState(s, id)
	if m.DeliveredAt == nil && cs != claimLive {
		// The claimer writes deliveredAt before it lets its marker go: a
		// marker gone (or free) since the record was read may mean the
		// record has it now. Read it again.
		if b, err := safeio.ReadOwned(s.DeliveredPath(id), maxInboxFile); err == nil {
			var again Message
			if json.Unmarshal(b, &again) == nil && again.DeliveredAt != nil {
				m = again
			}
		}
	}
	st := State{Delivered: &m}
	if m.DeliveredAt == nil {
		st.Incomplete = true
		st.Stalled = cs != claimLive
	} else if cs == claimPending {
		st.Unconfirmed = true
	}
	return st, nil
}

// Frame returns the text the session receives for m, the same for every
// lane (prompts.FrameChat). A preview frames a Message with no ID and no
// CreatedAt: the frame then shows prompts.PlaceholderID and
// prompts.PlaceholderTime, which prompts.FillFrame fills with what the
// queue assigned.
func (s *Session) Frame(m Message) string {
	return Frame(m)
}

// Frame is Session.Frame: the frame depends on the message alone.
func Frame(m Message) string {
	return prompts.FrameChat(prompts.ChatMessage{ID: m.ID, From: m.From, Text: m.Text, CreatedAt: m.CreatedAt})
}

// Reply reads outbox/<id>.json, the session's optional explicit reply.
func (s *Session) Reply(id string) (string, bool) {
	if validMessageID(id) != nil {
		return "", false
	}
	b, err := safeio.ReadOwned(s.outboxPath(id), maxInboxFile)
	if err != nil {
		return "", false
	}
	var r struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(b, &r) != nil {
		return "", false
	}
	return r.Text, true
}

// RecordError records an internal error in errors.log in the session
// folder (the hooks stay silent toward Claude Code): one line per distinct
// failure, with a count, the file bounded (chatlog.RecordError). Best effort.
func (s *Session) RecordError(err error) {
	if err == nil {
		return
	}
	if checkChatDirs(s) != nil {
		return
	}
	_ = chatlog.RecordError(filepath.Join(s.dir, "errors.log"), err.Error(), time.Now())
}

// ReadLog returns the newest keep entries of log.jsonl, oldest first;
// damaged lines, lines over chatlog.MaxLine and entries with no text are
// skipped (ReadLogCounted says how many). A missing log is no entry.
func (s *Session) ReadLog(keep int) ([]chatlog.Entry, error) {
	es, _, err := s.ReadLogCounted(keep)
	return es, err
}

// AppendLog appends e to log.jsonl (chatlog.Append: one write, O_APPEND,
// its text cut). The log is a cache: the transcript is the source of truth.
func (s *Session) AppendLog(e chatlog.Entry) error {
	if err := checkChatDirs(s); err != nil {
		return err
	}
	return chatlog.Append(s.LogPath(), e)
}

// ReadLogCounted returns the newest keep entries of log.jsonl, oldest
// first, and how many lines it skipped (chatlog.Read). A missing log is no
// entries.
func (s *Session) ReadLogCounted(keep int) ([]chatlog.Entry, int, error) {
	return chatlog.Read(s.LogPath(), keep)
}
