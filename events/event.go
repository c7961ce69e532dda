// Package events defines the two record types that flow through relay-baton:
// the conversation Event (one line of .ai-session/conversation.jsonl, its
// Meta typed per kind: CommandMeta, StatusMeta, ...) and the Activity (one
// thing an agent did: thought, ran a tool, wrote text, finished).
//
//	parsers (agents, transcript.Tail) ─► Activity ─► renderers (events/render)
//	writers (room) ─► NewWithMeta ─► Log.Append ─► ReadFile/Follow ─► MetaOf (resume)
//
// The log is append-only (one write per line, flock, torn lines skipped);
// LineReader is relay-baton's one line reader. Files are opened and
// locked through safeio, the one package of relay-baton it imports.
package events

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// SchemaVersion is the version written into every Event.
const SchemaVersion = 1

// Role says who an event is from.
type Role string

// The roles. relay-baton itself is an orchestrator program, not a model: its
// events are bookkeeping (previews, runs, status), never model speech.
const (
	RoleUser         Role = "user"
	RoleClaude       Role = "claude"
	RoleCodex        Role = "codex"
	RoleOrchestrator Role = "orchestrator"
	RoleRelayBaton   Role = "relay-baton"
)

// Roles lists every role in display order.
var Roles = []Role{RoleUser, RoleClaude, RoleCodex, RoleOrchestrator, RoleRelayBaton}

// RoleNames is Roles as strings (flag values, completion words).
func RoleNames() []string {
	out := make([]string, len(Roles))
	for i, r := range Roles {
		out[i] = string(r)
	}
	return out
}

// Kind says what an event records.
type Kind string

// The kinds: the room's turns, commands, runs and reports, and the
// orchestrator lane's chat kinds.
// This is the one place the list is kept.
const (
	KindMessage       Kind = "message"        // free-text turn
	KindCommand       Kind = "command"        // a slash command the user issued
	KindPromptPreview Kind = "prompt_preview" // a prompt shown before a real run
	KindAgentRun      Kind = "agent_run"      // an agent subprocess ran (or was refused)
	KindPlan          Kind = "plan"           // plan.md produced or updated
	KindExecute       Kind = "execute"        // execute phase result
	KindReview        Kind = "review"         // review output
	KindDiagnose      Kind = "diagnose"       // doctor --deep output
	KindHandoff       Kind = "handoff"        // handoff document produced
	KindStatus        Kind = "status"         // session status shown
	KindBudget        Kind = "budget"         // context budget shown
	KindAudit         Kind = "audit"          // policy-relevant facts (e.g. API-key env passed)
	KindChatSent      Kind = "chat_sent"      // message enqueued for an orchestrator session
	KindChatDelivered Kind = "chat_delivered" // message claimed by a lane
	KindChatReply     Kind = "chat_reply"     // summary of the session's reply
	KindChanges       Kind = "changes"        // what an agent run changed in the working tree, or an /undo of it
)

// Kinds lists every kind.
var Kinds = []Kind{
	KindMessage, KindCommand, KindPromptPreview, KindAgentRun, KindPlan,
	KindExecute, KindReview, KindDiagnose, KindHandoff, KindStatus, KindBudget,
	KindAudit, KindChatSent, KindChatDelivered, KindChatReply, KindChanges,
}

// KindNames is Kinds as strings (flag values, completion words).
func KindNames() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}

// ValidRole reports whether r is a known role.
func ValidRole(r Role) bool {
	for _, x := range Roles {
		if x == r {
			return true
		}
	}
	return false
}

// ValidKind reports whether k is a known kind.
func ValidKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Event is one line of conversation.jsonl. Text is a summary, never a full
// log or diff: large content lives in a file named in Refs.
type Event struct {
	SchemaVersion int               `json:"schemaVersion"`
	ID            string            `json:"id"`
	TS            string            `json:"ts"`
	SessionID     string            `json:"sessionId"`
	Role          Role              `json:"role"`
	Kind          Kind              `json:"kind"`
	Text          string            `json:"text"`
	Refs          map[string]string `json:"refs,omitempty"`
	Meta          MetaJSON          `json:"meta,omitempty"`
}

// TimeFormat is the timestamp layout of Event.TS: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// New returns an event with a fresh id and the current time.
func New(sessionID string, role Role, kind Kind, text string) Event {
	return Event{
		SchemaVersion: SchemaVersion,
		ID:            NewID(),
		TS:            time.Now().UTC().Format(TimeFormat),
		SessionID:     sessionID,
		Role:          role,
		Kind:          kind,
		Text:          text,
	}
}

// NewID returns "evt_" followed by a random (version 4) UUID.
func NewID() string {
	return "evt_" + NewUUID()
}

// NewUUID returns a random version 4 UUID in its canonical text form.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never happens on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// Time parses TS; the zero time if it does not parse.
func (e Event) Time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Validate reports why e is not a usable event, or nil.
// Unknown roles and kinds are accepted (a newer writer may add some); an
// event must have an id, a parseable timestamp, a role and a kind.
func (e Event) Validate() error {
	switch {
	case e.ID == "":
		return fmt.Errorf("event has no id")
	case e.Time().IsZero():
		return fmt.Errorf("event %s: bad ts %q", e.ID, e.TS)
	case e.Role == "":
		return fmt.Errorf("event %s: no role", e.ID)
	case e.Kind == "":
		return fmt.Errorf("event %s: no kind", e.ID)
	}
	return nil
}
