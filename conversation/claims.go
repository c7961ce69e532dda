package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/procfacts"
	"github.com/relay-baton/relay-baton/safeio"
)

// A claim in progress is recorded before the message leaves the inbox, so
// that a claimer killed at any point leaves a trace the next lane can act
// on:
//
//	claims/<id>.json   the claim marker: {id, lane, pid, inbox, claimedAt,
//	                   transcript, offset}; created already flock-ed (a
//	                   temporary file locked, then renamed in with
//	                   RENAME_NOREPLACE), held locked while the claimer lives
//
// The claimer then renames inbox/<name> to delivered/<id>.json and rewrites
// it with lane and claimedAt; once it has handed the message over (printed
// the Stop hook's block, written the waiter's stderr or the Monitor's
// line) it adds deliveredAt. A lane that hands the message over to Claude
// Code through its own exit (the hooks) leaves the marker, unlocked, until
// the transcript shows the delivery; a library Claim removes it at once.
//
// recoverClaims (run by every lane before it claims, by Watch and by resume)
// looks at each marker whose lock is free (its claimer is gone):
//   - the transcript shows the delivery after the marker's offset: done,
//     the marker goes;
//   - no deliveredAt (the claimer died before handing the message over):
//     the message goes back to the inbox under its old name, first in line;
//   - a socket post (lane socket) not in the transcript claimGrace after
//     it, nor in Claude Code's queue (an enqueue line), or with no
//     transcript to check: back to the inbox, first in line, with the post
//     kept in the record (socketPost), and the socket lane is turned off
//     for the session's process (socket-off.json): the Stop hook and the
//     rewake waiter deliver it. The socket answers nothing, so only the
//     transcript is evidence of its delivery;
//   - a hand-over by a hook lane (the Stop hook's block, the waiter's
//     stderr, the Monitor's line) not in the transcript claimGrace after
//     it: back to the inbox too (at most maxDeliveries times in all);
//   - a hook lane's hand-over with no transcript to check: delivered, by
//     the hook's own documented output.
// Each recovery is recorded in errors.log.
//
// A socket post put back may still show later (a session that held it for
// its user's approval). Before any lane hands such a message over again it
// looks for the post in the transcript (ClaimWith, socketPostShown): shown
// or enqueued, it counts as delivered by the socket and is not handed over
// again. Shown after another lane handed it over, it reached the session
// twice: Watch counts the first showing as the delivery and reports the
// second (UpdDuplicate, errors.log); it is never counted twice.

// claimGrace is how long after a hand-over the delivery may take to show
// in the transcript before the message is delivered again (default 30 s,
// the room's confirmation window; RELAY_BATON_CLAIM_GRACE overrides it).
func claimGrace() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RELAY_BATON_CLAIM_GRACE")); err == nil && d >= 0 {
		return d
	}
	return 30 * time.Second
}

// maxDeliveries caps how often one message is delivered when its delivery
// never shows in the transcript (a transcript path that is wrong would
// otherwise repeat it forever).
const maxDeliveries = 3

// ClaimsDir returns claims/, the markers of claims in progress.
func (s *Session) ClaimsDir() string { return filepath.Join(s.dir, "claims") }

func markerPath(s *Session, id string) string { return filepath.Join(s.ClaimsDir(), id+".json") }

// claimMarker is the content of claims/<id>.json.
type claimMarker struct {
	ID         string    `json:"id"`
	Lane       Lane      `json:"lane"`
	PID        int       `json:"pid"`
	Inbox      string    `json:"inbox"`
	ClaimedAt  time.Time `json:"claimedAt"`
	Transcript string    `json:"transcript,omitempty"`
	Offset     int64     `json:"offset"`
}

// heldClaim is a marker this process holds locked.
type heldClaim struct {
	s    *Session
	path string
	f    *os.File
}

// newMarker creates claims/<id>.json already locked. fs.ErrExist: another
// claim of that id (live, or stale and to be recovered) holds the name.
func newMarker(s *Session, mk claimMarker) (*heldClaim, error) {
	f, err := os.CreateTemp(s.ClaimsDir(), ".tmp-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	fail := func(err error) (*heldClaim, error) {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	// Blocking: a recoverClaims may be testing the lock of this new temporary
	// file for a moment.
	if err := filelock.Wait(f); err != nil {
		return fail(fmt.Errorf("lock a new claim marker: %w", err))
	}
	b, _ := json.Marshal(mk)
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	p := markerPath(s, mk.ID)
	if err := filelock.RenameNoReplace(tmp, p); err != nil {
		return fail(err)
	}
	return &heldClaim{s: s, path: p, f: f}, nil
}

// drop removes the marker and releases it.
func (h *heldClaim) drop() {
	if h == nil || h.f == nil {
		return
	}
	os.Remove(h.path)
	h.f.Close()
	h.f = nil
}

// release unlocks the marker and leaves it for recoverClaims (the delivery is
// confirmed from the transcript).
func (h *heldClaim) release() {
	if h == nil || h.f == nil {
		return
	}
	h.f.Close()
	h.f = nil
}

// ClaimOptions tunes ClaimWith.
type ClaimOptions struct {
	// Handover: the caller hands the message over itself (prints it) and
	// then calls ClaimResult.Delivered; until then the claim is recorded as
	// in progress, and a claimer that dies first leaves the message to be
	// delivered again. Without it the claim counts as delivered at once.
	Handover bool
	// Transcript is the session's transcript (the hook payload's
	// transcript_path), where a handed-over delivery must show; "" looks it
	// up (LocateTranscript).
	Transcript string
	// Prefer (waitClaimWith only) is tried before each claim: when it
	// reports true a lane chosen first (the socket) took the waiting
	// messages, or had none to take, and nothing is claimed this round.
	Prefer func() bool
}

// Delivered records that the message was handed over (deliveredAt) and
// releases the claim. With a Handover claim the marker stays until the
// transcript shows the delivery (see recoverClaims).
func (r *ClaimResult) Delivered() error {
	if !r.OK || r.held == nil {
		return nil
	}
	h := r.held
	var err error
	if r.handover {
		now := time.Now().UTC().Truncate(time.Millisecond)
		r.Message.DeliveredAt = &now
		if err = writeRecord(h.s, r.Message); err != nil {
			h.s.RecordError(fmt.Errorf("record delivery of %s: %w", r.Message.ID, err))
		}
	} // else ClaimWith wrote deliveredAt with the claim
	if r.handover {
		h.release()
	} else {
		h.drop()
	}
	r.held = nil
	return err
}

// abandon puts a claimed message that could not be handed over (its
// reader is gone) back into the inbox at once, first in line.
func (r *ClaimResult) abandon(why error) error {
	if !r.OK || r.held == nil {
		return nil
	}
	h := r.held
	r.held = nil
	var mk claimMarker
	if b, err := safeio.ReadOwned(h.path, maxInboxFile); err == nil {
		_ = json.Unmarshal(b, &mk)
	}
	err := requeue(h.s, r.Message, mk)
	if err == nil {
		h.s.RecordError(fmt.Errorf("claim of %s by %s abandoned (%w): put back in the inbox for the next lane", r.Message.ID, r.Message.Lane, why))
		h.drop()
	} else {
		h.release()
	}
	return err
}

// writeRecord rewrites delivered/<id>.json.
func writeRecord(s *Session, m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.DeliveredDir(), m.ID+".json", b, false) // the rename already claimed it
}

// SocketPost is where a socket post that did not show was made: the
// transcript and its size at the claim, so that a late showing is found.
type SocketPost struct {
	At         time.Time `json:"at"`
	Transcript string    `json:"transcript,omitempty"`
	Offset     int64     `json:"offset"`
}

// socketPostShown reports whether the transcript shows message id (its
// delivery, or Claude Code taking it into its queue) after the post p.
func socketPostShown(s *Session, p SocketPost, id string) bool {
	mk := claimMarker{Transcript: p.Transcript, Offset: p.Offset}
	if inTranscript(s, mk, id) == yes {
		return true
	}
	return claudecode.EnqueuedInTranscript(transcriptOf(s, mk), p.Offset, id)
}

// requeue moves delivered/<m.ID>.json back to the inbox as mk.Inbox (a
// fresh name if that is gone or taken), without the claim's fields. A
// socket post is kept as m.SocketPost (the earliest one), not counted as a
// delivery.
func requeue(s *Session, m Message, mk claimMarker) error {
	switch {
	case m.DeliveredAt != nil && mk.Lane == LaneSocket:
		if m.SocketPost == nil {
			m.SocketPost = &SocketPost{At: *m.DeliveredAt, Transcript: mk.Transcript, Offset: mk.Offset}
		}
	case m.DeliveredAt != nil:
		m.Deliveries++ // handed over once already, never seen
	}
	m.Lane, m.DeliveredAt, m.ClaimedAt = "", nil, nil
	if err := writeRecord(s, m); err != nil {
		return err
	}
	name := mk.Inbox
	if name == "" || idFromName(name) == "" || validMessageID(idFromName(name)) != nil {
		name = fmt.Sprintf("%013d-%s.json", m.CreatedAt.UnixMilli(), m.ID)
	}
	err := filelock.RenameNoReplace(s.DeliveredPath(m.ID), filepath.Join(s.InboxDir(), name))
	if errors.Is(err, fs.ErrExist) {
		name = fmt.Sprintf("%013d-%s.json", m.CreatedAt.UnixMilli(), m.ID)
		err = filelock.RenameNoReplace(s.DeliveredPath(m.ID), filepath.Join(s.InboxDir(), name))
	}
	return err
}

// recovered is one claim recoverClaims acted on.
type recovered struct {
	ID      string
	Lane    Lane
	Requeue bool   // put back in the inbox (else: confirmed, or given up)
	Dropped bool   // a socket post that did not show: the socket lane is off
	Why     string // what happened, for errors.log
}

// recoverClaims looks at the claims whose claimer is gone and settles each one
// (see the top of this file): confirmed from the transcript, or put back in
// the inbox to be delivered again. Markers of live claimers are left alone.
// Then it ends the turns of socket posts the transcript shows ended
// (settleAnswers). It is cheap when there is nothing to do (two directory
// reads).
func recoverClaims(s *Session) []recovered {
	defer settleAnswers(s, time.Now())
	names, err := safeio.ReadDirNames(s.ClaimsDir()) // a FIFO there does not block
	if err != nil {
		return nil
	}
	var out []recovered
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			removeStaleTemp(s, filepath.Join(s.ClaimsDir(), n))
			continue
		}
		id, ok := strings.CutSuffix(n, ".json")
		if !ok || strings.HasPrefix(n, ".") || validMessageID(id) != nil {
			continue
		}
		if r, ok := recoverOne(s, id, false); ok {
			out = append(out, r)
		}
	}
	return out
}

// claimStatus is what the claims folder says about a message.
type claimStatus int

// The claim statuses.
const (
	claimNone    claimStatus = iota // no claim marker: nothing in progress
	claimLive                       // a live claimer holds it
	claimPending                    // handed over or dead, not confirmed yet
)

// claimState reports the claim status of message id.
func claimState(s *Session, id string) claimStatus {
	f, err := safeio.OpenChecked(markerPath(s, id), os.O_RDWR, 0, true)
	if err != nil {
		return claimNone
	}
	defer f.Close()
	if ok, _ := filelock.Try(f); !ok {
		return claimLive
	}
	return claimPending
}

// Requeue puts message id back into the inbox now if its claim (a marker
// in claims/) is not confirmed in the transcript and no claimer holds it
// (the user asked: /resend). It reports whether it did; confirmed is true
// when the transcript shows the delivery. A message without a claim marker
// is left alone (false, false).
func (s *Session) Requeue(id string) (requeued, confirmed bool, err error) {
	if err := validMessageID(id); err != nil {
		return false, false, err
	}
	if _, err := os.Lstat(markerPath(s, id)); err != nil {
		return false, false, nil // no claim in progress: nothing to put back
	}
	r, ok := recoverOne(s, id, true)
	if !ok {
		return false, false, nil
	}
	return r.Requeue, !r.Requeue && r.Why == "confirmed", nil
}

type tristate int

const (
	unknown tristate = iota
	yes
	no
)

// transcriptOf is the transcript a claim is checked against: the
// marker's, else the session's.
func transcriptOf(s *Session, mk claimMarker) string {
	if mk.Transcript != "" && filepath.IsAbs(mk.Transcript) {
		return mk.Transcript
	}
	return LocateTranscript(s)
}

// inTranscript reports whether the transcript shows the delivery of id
// after the marker's offset.
func inTranscript(s *Session, mk claimMarker, id string) tristate {
	path := transcriptOf(s, mk)
	if path == "" {
		return unknown
	}
	shown, _, _, err := turnOf(path, mk.Offset, id)
	switch {
	case shown:
		return yes
	case err != nil:
		return unknown
	}
	return no
}

// recoverOne settles the claim of id if its claimer is gone; force
// requeues a handed-over claim without waiting for claimGrace.
func recoverOne(s *Session, id string, force bool) (recovered, bool) {
	p := markerPath(s, id)
	f, err := safeio.OpenChecked(p, os.O_RDWR, 0, true)
	if err != nil {
		if errors.Is(err, safeio.ErrNotRegular) {
			os.Remove(p) // not ours: a marker is always a regular file
		}
		return recovered{}, false
	}
	defer f.Close()
	if ok, _ := filelock.Try(f); !ok {
		return recovered{}, false // its claimer is alive
	}
	// Still the marker at p (not one removed while we waited)?
	if fi, err := f.Stat(); err != nil {
		return recovered{}, false
	} else if cur, err := os.Lstat(p); err != nil || !os.SameFile(fi, cur) {
		return recovered{}, false
	}
	var mk claimMarker
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	_ = json.Unmarshal(b, &mk)
	drop := func() { os.Remove(p) }
	who := string(mk.Lane)
	if who == "" {
		who = "a lane"
	}
	if mk.PID > 0 {
		who += " (pid " + strconv.Itoa(mk.PID) + ")"
	}
	rec, reason := readMessage(s.DeliveredPath(id))
	if reason != "" {
		// Died before the rename (the message is still in the inbox), or
		// the record went away: nothing in progress any more.
		drop()
		return recovered{}, false
	}
	rec.ID = id
	r := recovered{ID: id, Lane: mk.Lane}
	var seen tristate
	if rec.DeliveredAt != nil && !force && time.Since(*rec.DeliveredAt) < claimGrace() {
		// Handed over a moment ago. A socket post that shows already is
		// confirmed now (the transcript is its only evidence; the next
		// message waits for it); any other hand-over is not scanned for yet.
		if mk.Lane != LaneSocket {
			return recovered{}, false
		}
		if seen = inTranscript(s, mk, id); seen != yes {
			return recovered{}, false
		}
	} else {
		seen = inTranscript(s, mk, id)
	}
	if seen == no && mk.Lane == LaneSocket && claudecode.EnqueuedInTranscript(transcriptOf(s, mk), mk.Offset, id) {
		// The session took it into its queue and hands it to the model at
		// its next tool result: not lost, not to be delivered again.
		return recovered{}, false
	}
	socketOff := ""
	switch {
	case seen == yes:
		if rec.DeliveredAt == nil {
			now := time.Now().UTC().Truncate(time.Millisecond)
			rec.DeliveredAt = &now
			if rec.Lane == "" {
				rec.Lane = mk.Lane
			}
			_ = writeRecord(s, rec)
		}
		drop()
		if mk.Lane == LaneSocket {
			socketConfirmed(s, mk.ClaimedAt)
			markShown(s, id, transcriptOf(s, mk), mk.Offset)
		}
		r.Why = "confirmed"
		return r, true
	case rec.DeliveredAt == nil:
		r.Why = fmt.Sprintf("claim of %s by %s at %s died before the message was handed over", id, who, mk.ClaimedAt.Format(time.RFC3339Nano))
	case mk.Lane == LaneSocket && seen == unknown:
		// The socket answers nothing: without a transcript to read, nothing
		// says the session has it.
		socketOff = "and the session's transcript cannot be read to confirm it"
		r.Why = fmt.Sprintf("message %s posted to the messaging socket at %s cannot be confirmed (the session's transcript cannot be read)", id, rec.DeliveredAt.Format(time.RFC3339Nano))
	case mk.Lane == LaneSocket:
		socketOff = "and the session never showed it"
		r.Why = fmt.Sprintf("message %s posted to the messaging socket at %s never showed in the transcript (the session holds or refuses peer messages, or dropped it)", id, rec.DeliveredAt.Format(time.RFC3339Nano))
	case seen == unknown:
		// Nothing to check against: a hook lane's hand-over, made through
		// the hook's own documented output, counts as delivered.
		drop()
		return recovered{}, false
	case rec.Deliveries+1 >= maxDeliveries && !force:
		now := time.Now().UTC().Truncate(time.Millisecond)
		rec.GaveUp = &now
		if err := writeRecord(s, rec); err != nil {
			s.RecordError(fmt.Errorf("record that message %s was given up: %w", id, err))
		}
		drop()
		s.RecordError(fmt.Errorf("message %s was handed over %d times by %s (its documented output) and never showed in the transcript: counted as delivered by that output, not handed over again (check the session's transcript path with `relay-baton targets`)", id, rec.Deliveries+1, who))
		r.Why = "gave up"
		return r, true
	default:
		r.Why = fmt.Sprintf("message %s handed over by %s at %s never showed in the transcript", id, who, rec.DeliveredAt.Format(time.RFC3339Nano))
	}
	if err := requeue(s, rec, mk); err != nil {
		s.RecordError(fmt.Errorf("recover %s: %s; could not put it back in the inbox: %w", id, r.Why, err))
		return recovered{}, false
	}
	drop()
	r.Requeue = true
	if socketOff != "" {
		r.Dropped = true
		markSocketOff(s, id, socketOff)
		s.RecordError(fmt.Errorf("recovered %s: %s; put back in the inbox, first in line, for the Stop hook and the rewake waiter; the socket lane is off for this session process", id, r.Why))
		return r, true
	}
	s.RecordError(fmt.Errorf("recovered %s: %s; put back in the inbox for the next lane", id, r.Why))
	return r, true
}

// confirmClaim removes the claim marker of id once the caller has seen its
// delivery in the transcript (Watch does), so no later lane scans for it.
func confirmClaim(s *Session, id string) {
	if validMessageID(id) != nil {
		return
	}
	p := markerPath(s, id)
	f, err := safeio.OpenChecked(p, os.O_RDWR, 0, true)
	if err != nil {
		return
	}
	defer f.Close()
	if ok, _ := filelock.Try(f); !ok {
		return
	}
	if fi, err := f.Stat(); err == nil {
		if cur, err := os.Lstat(p); err == nil && os.SameFile(fi, cur) {
			var mk claimMarker
			b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
			if json.Unmarshal(b, &mk) == nil && mk.Lane == LaneSocket {
				socketConfirmed(s, mk.ClaimedAt)
				markShown(s, id, transcriptOf(s, mk), mk.Offset)
			}
			os.Remove(p)
		}
	}
}

// settleSocketPost puts message id back in the inbox, first in line, when
// it was posted to the socket and has not shown in the transcript (nor in
// Claude Code's queue), and turns the socket lane off for the session
// process (see the top of this file). Watch calls it when claimGrace has
// passed since the post; it reports whether it did.
func settleSocketPost(s *Session, id string) bool {
	if validMessageID(id) != nil {
		return false
	}
	b, err := safeio.ReadOwned(markerPath(s, id), 64<<10)
	if err != nil {
		return false
	}
	var mk claimMarker
	if json.Unmarshal(b, &mk) != nil || mk.Lane != LaneSocket {
		return false
	}
	r, ok := recoverOne(s, id, true)
	return ok && r.Requeue
}

// removeStaleTemp removes a marker's temporary file (.tmp-<pid>-*) left
// by a claimer that died while creating it: its process is gone.
func removeStaleTemp(s *Session, p string) {
	pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(p), ".tmp-"), "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || procfacts.Alive(pid) {
		return
	}
	os.Remove(p)
}
