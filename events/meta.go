package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Meta is the typed meta of one kind of event: every writer builds one of
// the types below and every reader (resume) decodes the same type, so a
// renamed key breaks a build or a golden file (testdata/meta/), never a
// --resume in silence. The log keeps meta as a JSON object.
type Meta interface {
	// MetaKind is the event kind this meta belongs to.
	MetaKind() Kind
}

// Bool and Int return pointers, for the optional fields whose zero value
// is still worth recording (confirmed: false, exitCode: 0).
func Bool(b bool) *bool { return &b }
func Int(n int) *int    { return &n }

// MessageMeta is the meta of a free-text turn (a question or its answer,
// or a /note).
type MessageMeta struct {
	Agent string `json:"agent,omitempty"`
	Note  bool   `json:"note,omitempty"` // a /note, for the record only
}

// CommandMeta is the meta of a slash command, of a confirmation (Confirmed
// set, true or false) and of a refused command (Error).
type CommandMeta struct {
	Command   string `json:"command,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Session   string `json:"session,omitempty"`
	Confirmed *bool  `json:"confirmed,omitempty"`
	Sent      *bool  `json:"sent,omitempty"`
	AutoYes   *bool  `json:"autoYes,omitempty"`
	Step      int    `json:"step,omitempty"` // a /continue step confirmed by the loop's confirmation
	Half      string `json:"half,omitempty"` // which half of that step: "plan" or "execute"
	PreviewID string `json:"previewId,omitempty"`
	Reason    string `json:"reason,omitempty"`
	OneShot   bool   `json:"oneShot,omitempty"`
	Error     string `json:"error,omitempty"`
}

// PromptPreviewMeta is the meta of a prompt shown before a run or a chat
// message. Prompt holds a short prompt inline; a long one is in Refs.
type PromptPreviewMeta struct {
	Agent        string   `json:"agent"`
	Command      string   `json:"command"`
	Role         string   `json:"role,omitempty"`
	Session      string   `json:"session,omitempty"`
	Argv         string   `json:"argv,omitempty"`
	Cwd          string   `json:"cwd,omitempty"`
	Policy       string   `json:"policy,omitempty"`
	Stripped     []string `json:"stripped,omitempty"`
	PromptChars  int      `json:"promptChars"`
	MessageChars int      `json:"messageChars,omitempty"`
	Edited       bool     `json:"edited,omitempty"`
	Conversation string   `json:"conversation,omitempty"` // the agent conversation the run continues
	Prompt       string   `json:"prompt,omitempty"`
	PromptError  string   `json:"promptError,omitempty"`
}

// AgentRunMeta is the meta of an agent run, or of one that did not run
// (Ran false: refused, or it could not start).
type AgentRunMeta struct {
	Agent      string  `json:"agent"`
	Command    string  `json:"command"`
	Role       string  `json:"role,omitempty"`
	Argv       string  `json:"argv,omitempty"`
	Confirmed  bool    `json:"confirmed"`
	Ran        bool    `json:"ran"`
	ExitCode   *int    `json:"exitCode,omitempty"`
	DurationMs *int64  `json:"durationMs,omitempty"`
	Cancelled  bool    `json:"cancelled,omitempty"`
	TimedOut   bool    `json:"timedOut,omitempty"`
	CostUSD    float64 `json:"costUsd,omitempty"` // the run's own cost
	Reason     string  `json:"reason,omitempty"`
	PreviewID  string  `json:"previewId,omitempty"`
	Error      string  `json:"error,omitempty"`
	HeadBefore string  `json:"headBefore,omitempty"`
	HeadAfter  string  `json:"headAfter,omitempty"`

	Conversation      string `json:"conversation,omitempty"`      // the session/thread id the run used
	ConversationTurns int    `json:"conversationTurns,omitempty"` // runs in it so far
	ResumeFailed      string `json:"resumeFailed,omitempty"`      // the conversation that could not be continued

	// The run's own token counts, and what the CLI reported when that was
	// a running total of the conversation (claude's cost, codex's tokens)
	// rather than the run's own.
	InputTokens               int64   `json:"inputTokens,omitempty"`
	CachedInputTokens         int64   `json:"cachedInputTokens,omitempty"`
	OutputTokens              int64   `json:"outputTokens,omitempty"`
	ReportedCostUSD           float64 `json:"reportedCostUsd,omitempty"`
	ReportedInputTokens       int64   `json:"reportedInputTokens,omitempty"`
	ReportedCachedInputTokens int64   `json:"reportedCachedInputTokens,omitempty"`
	ReportedOutputTokens      int64   `json:"reportedOutputTokens,omitempty"`
}

// PlanMeta is the meta of plan.md written (or not), also by the planner
// half of a /continue step (LoopStep set).
type PlanMeta struct {
	Agent           string   `json:"agent"`
	Written         bool     `json:"written"`
	Chars           int      `json:"chars,omitempty"`
	MissingSections []string `json:"missingSections,omitempty"`
	LoopStep        *int     `json:"loopStep,omitempty"`
	MaxSteps        int      `json:"maxSteps,omitempty"`
	Complete        *bool    `json:"complete,omitempty"` // the planner declared the plan complete
	Answer          string   `json:"answer,omitempty"`   // the planner's answer when it was no plan
	NextStep        string   `json:"nextStep,omitempty"`
}

// ExecuteMeta is the meta of an /execute, of a /continue step (Step,
// MaxSteps) and of a loop's stop (Steps, StopReason).
type ExecuteMeta struct {
	Agent        string `json:"agent"`
	ExitCode     *int   `json:"exitCode,omitempty"`
	ChangedFiles *int   `json:"changedFiles,omitempty"`
	Step         int    `json:"step,omitempty"`
	MaxSteps     int    `json:"maxSteps,omitempty"`
	Steps        *int   `json:"steps,omitempty"`
	StopReason   string `json:"stopReason,omitempty"`
	Half         string `json:"half,omitempty"`   // the step's half: "plan" or "execute"
	Answer       string `json:"answer,omitempty"` // the executor's final answer, cut
	AgentRuns    *int   `json:"agentRuns,omitempty"`
	PlanUpdates  *int   `json:"planUpdates,omitempty"`
}

// ReviewMeta is the meta of a review: deterministic (the counts) or by an
// agent (Agent, ExitCode).
type ReviewMeta struct {
	Deterministic bool   `json:"deterministic"`
	Agent         string `json:"agent,omitempty"`
	ExitCode      *int   `json:"exitCode,omitempty"`
	ChangedFiles  *int   `json:"changedFiles,omitempty"`
	Deletions     *int   `json:"deletions,omitempty"`
	LargeDiffs    *int   `json:"largeDiffs,omitempty"`
	LikelySecrets *int   `json:"likelySecrets,omitempty"`
	TestsTouched  *int   `json:"testsTouched,omitempty"`
	NotInPlan     *int   `json:"notInPlan,omitempty"`
}

// DiagnoseMeta is the meta of a doctor run.
type DiagnoseMeta struct {
	Deep     bool `json:"deep"`
	Failed   int  `json:"failed"`
	Warnings int  `json:"warnings"`
}

// ChangesMeta is the meta of what an agent run changed in the working tree
// (Undo false), or of an /undo of it (Undo true; Refused says why it was
// refused or failed). Before and After are the trees in the room's private
// snapshot store, kept for the room's life.
type ChangesMeta struct {
	Agent        string   `json:"agent,omitempty"`
	Command      string   `json:"command,omitempty"`
	Files        *int     `json:"files,omitempty"`
	Added        *int     `json:"added,omitempty"`
	Deleted      *int     `json:"deleted,omitempty"`
	Paths        []string `json:"paths,omitempty"` // the changed paths (at most 200)
	NewFiles     []string `json:"newFiles,omitempty"`
	DeletedFiles []string `json:"deletedFiles,omitempty"`
	Before       string   `json:"before,omitempty"`
	After        string   `json:"after,omitempty"`
	Undo         bool     `json:"undo,omitempty"`
	Refused      string   `json:"refused,omitempty"`
	// A run in a worktree of its own: its id and folder; Apply and
	// Discard say what /apply and /undo did with it.
	Run      string `json:"run,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	Apply    bool   `json:"apply,omitempty"`
	Discard  bool   `json:"discard,omitempty"`
}

// HandoffMeta is the meta of a handoff document.
type HandoffMeta struct {
	Agent string `json:"agent"` // to whom
	From  string `json:"from"`
	Chars int    `json:"chars"`
	Diet  string `json:"diet"`
}

// StatusMeta is the meta of a status line: an agent switch (Switched), a
// resume (Resumed), a session status, a chat message cancelled or not
// confirmed, a loop offered again.
type StatusMeta struct {
	Agent     string `json:"agent,omitempty"`
	Switched  bool   `json:"switched,omitempty"` // the room's active agent became Agent
	Session   string `json:"session,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Lead      *bool  `json:"lead,omitempty"`
	// FollowsLead: the switch went to whichever session is the lead (no
	// /target), so a resume follows the lead again instead of this session.
	FollowsLead    bool   `json:"followsLead,omitempty"`
	MessageID      string `json:"messageId,omitempty"`
	Lane           string `json:"lane,omitempty"`
	Cancelled      bool   `json:"cancelled,omitempty"`
	Unconfirmed    bool   `json:"unconfirmed,omitempty"`
	ChangedFiles   *int   `json:"changedFiles,omitempty"`
	Plan           *bool  `json:"plan,omitempty"`
	Resumed        bool   `json:"resumed,omitempty"`
	Events         *int   `json:"events,omitempty"`
	SkippedLines   *int   `json:"skippedLines,omitempty"`
	SkippedEvents  *int   `json:"skippedEvents,omitempty"`
	LoopResumeFrom int    `json:"loopResumeFrom,omitempty"`
	MaxSteps       int    `json:"maxSteps,omitempty"`
	LoopResumeHalf string `json:"loopResumeHalf,omitempty"`
	// NewConversation names the agent whose conversation /new forgot
	// (Previous its id).
	NewConversation string `json:"newConversation,omitempty"`
	Previous        string `json:"previous,omitempty"`
}

// BudgetMeta is the meta of a context budget measure.
type BudgetMeta struct {
	Diet  string  `json:"diet"`
	Chars int     `json:"chars"`
	Ratio float64 `json:"ratio"`
}

// AuditMeta is the meta of a policy-relevant fact.
type AuditMeta struct {
	Agent      string   `json:"agent"`
	Vars       []string `json:"vars,omitempty"` // API-key variables passed
	HeadBefore string   `json:"headBefore,omitempty"`
	HeadAfter  string   `json:"headAfter,omitempty"`
}

// ChatSentMeta is the meta of a chat message queued for a session.
type ChatSentMeta struct {
	Agent            string `json:"agent,omitempty"`
	Session          string `json:"session"`
	MessageID        string `json:"messageId"`
	Ahead            int    `json:"ahead"`
	From             string `json:"from,omitempty"`
	Chars            int    `json:"chars,omitempty"`
	TranscriptOffset int64  `json:"transcriptOffset,omitempty"` // the transcript's size when sent
	Workspace        string `json:"workspace,omitempty"`

	// LegacyOffset is TranscriptOffset as an early reader expected it
	// ("offset"); read only, for logs that have it.
	LegacyOffset int64 `json:"offset,omitempty"`
}

// ChatDeliveredMeta is the meta of a chat message claimed by a lane.
type ChatDeliveredMeta struct {
	Agent     string `json:"agent,omitempty"`
	Session   string `json:"session"`
	MessageID string `json:"messageId"`
	Lane      string `json:"lane"`
	At        string `json:"at,omitempty"`     // TimeFormat
	SentAt    string `json:"sentAt,omitempty"` // TimeFormat
	LatencyMs *int64 `json:"latencyMs,omitempty"`
}

// ChatReplyMeta is the meta of the summary of a session's reply.
type ChatReplyMeta struct {
	Agent          string `json:"agent,omitempty"`
	Session        string `json:"session"`
	MessageID      string `json:"messageId"`
	Lane           string `json:"lane,omitempty"`
	Chars          *int   `json:"chars,omitempty"`
	TranscriptFrom *int64 `json:"transcriptFrom,omitempty"`
	TranscriptTo   *int64 `json:"transcriptTo,omitempty"`
	Outbox         *bool  `json:"outbox,omitempty"`
	Source         string `json:"source,omitempty"` // "resume" when found while resuming
}

func (MessageMeta) MetaKind() Kind       { return KindMessage }
func (CommandMeta) MetaKind() Kind       { return KindCommand }
func (PromptPreviewMeta) MetaKind() Kind { return KindPromptPreview }
func (AgentRunMeta) MetaKind() Kind      { return KindAgentRun }
func (PlanMeta) MetaKind() Kind          { return KindPlan }
func (ExecuteMeta) MetaKind() Kind       { return KindExecute }
func (ReviewMeta) MetaKind() Kind        { return KindReview }
func (DiagnoseMeta) MetaKind() Kind      { return KindDiagnose }
func (HandoffMeta) MetaKind() Kind       { return KindHandoff }
func (StatusMeta) MetaKind() Kind        { return KindStatus }
func (BudgetMeta) MetaKind() Kind        { return KindBudget }
func (AuditMeta) MetaKind() Kind         { return KindAudit }
func (ChatSentMeta) MetaKind() Kind      { return KindChatSent }
func (ChatDeliveredMeta) MetaKind() Kind { return KindChatDelivered }
func (ChatReplyMeta) MetaKind() Kind     { return KindChatReply }
func (ChangesMeta) MetaKind() Kind       { return KindChanges }

// MetaTypes maps every kind to a zero value of its meta type (for the
// golden files and for readers that take any kind).
var MetaTypes = map[Kind]Meta{
	KindMessage: MessageMeta{}, KindCommand: CommandMeta{}, KindPromptPreview: PromptPreviewMeta{},
	KindAgentRun: AgentRunMeta{}, KindPlan: PlanMeta{}, KindExecute: ExecuteMeta{}, KindReview: ReviewMeta{},
	KindDiagnose: DiagnoseMeta{}, KindHandoff: HandoffMeta{}, KindStatus: StatusMeta{}, KindBudget: BudgetMeta{},
	KindAudit: AuditMeta{}, KindChatSent: ChatSentMeta{}, KindChatDelivered: ChatDeliveredMeta{}, KindChatReply: ChatReplyMeta{},
	KindChanges: ChangesMeta{},
}

// MetaJSON is an event's meta as the log holds it: one JSON object, kept
// as its bytes (nil when the event has none) and decoded into its kind's
// type by MetaOf.
type MetaJSON []byte

// MarshalJSON writes the object as it is (null when there is none).
func (m MetaJSON) MarshalJSON() ([]byte, error) {
	if len(m) == 0 {
		return []byte("null"), nil
	}
	return m, nil
}

// UnmarshalJSON keeps a copy of the value's bytes; null and an empty
// object leave no meta.
func (m *MetaJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" || emptyObject(b, 0) {
		*m = nil
		return nil
	}
	*m = append((*m)[:0], b...)
	return nil
}

// emptyObject reports whether b[i:] is an object without members.
func emptyObject(b []byte, i int) bool {
	i = JSONSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = JSONSpace(b, i+1)
	return i < len(b) && b[i] == '}' && JSONSpace(b, i+1) == len(b)
}

// NewWithMeta is New with the kind taken from m and m stored as Event.Meta:
// its set fields as one JSON object, keys sorted, as the log has always
// held it (no meta when no field is set).
func NewWithMeta(sessionID string, role Role, text string, m Meta) Event {
	e := New(sessionID, role, m.MetaKind(), text)
	e.Meta = encodeMeta(m)
	return e
}

// encodeMeta encodes m as encoding/json does without HTML escaping, with
// its keys sorted and invalid UTF-8 held as U+FFFD itself rather than its
// escape: the bytes a map of m's fields encodes to.
func encodeMeta(m Meta) MetaJSON {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		panic(fmt.Sprintf("events: meta %T does not encode: %v", m, err)) // plain structs always do
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	type member struct{ key, kv []byte }
	var members []member
	for i := 1; i < len(b)-1; {
		kend := JSONStringEnd(b, i)
		vend := JSONSkip(b, kend+1)
		members = append(members, member{b[i+1 : kend-1], b[i:vend]})
		i = vend + 1
	}
	if len(members) == 0 {
		return nil
	}
	slices.SortFunc(members, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	out := append(make(MetaJSON, 0, len(b)), '{')
	for i, mb := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendReplacementChars(out, mb.kv)
	}
	return append(out, '}')
}

// appendReplacementChars appends JSON text b with each \ufffd escape (what
// encoding/json writes for invalid UTF-8) replaced by U+FFFD itself.
func appendReplacementChars(dst, b []byte) []byte {
	for {
		i := bytes.Index(b, []byte(`\ufffd`))
		if i < 0 {
			return append(dst, b...)
		}
		// An escape only when an even run of backslashes precedes it.
		j := i
		for j > 0 && b[j-1] == '\\' {
			j--
		}
		dst = append(dst, b[:i]...)
		if (i-j)%2 == 0 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, `\ufffd`...)
		}
		b = b[i+6:]
	}
}

// MetaOf decodes e.Meta into the meta type of e's kind, T, as encoding/json
// would decode the log's meta object into T, except that keys match their
// json tags exactly (null leaves a field zero, unknown keys are ignored). A
// field of the wrong type is left zero and reported, the other fields are
// still decoded; an event of another kind is an error.
func MetaOf[T Meta](e *Event) (T, error) {
	var m T
	if k := m.MetaKind(); k != e.Kind {
		return m, fmt.Errorf("event %s is a %s, not a %s", e.ID, e.Kind, k)
	}
	bad, err := decodeFields(e.Meta, reflect.ValueOf(&m).Elem())
	switch {
	case err != nil:
		return m, fmt.Errorf("event %s: meta: %w", e.ID, err)
	case bad != nil:
		slices.Sort(bad)
		return m, fmt.Errorf("event %s: meta %s of the wrong type", e.ID, strings.Join(bad, ", "))
	}
	return m, nil
}

// MetaAgent is the agent e's meta names, whatever its kind ("" when none,
// or when it is not a string). Replay asks it of every event: it reads the
// one member without decoding the others.
func MetaAgent(e *Event) string {
	if len(e.Meta) == 0 {
		return ""
	}
	d := decoder{b: e.Meta, s: string(e.Meta)}
	d.ws()
	if d.peek() != '{' {
		return ""
	}
	agent := ""
	err := d.members(true, func(k string, _ bool) error {
		if k == "agent" {
			agent = "" // the last one wins
			if d.peek() == '"' {
				s, err := d.str()
				agent = s
				return err
			}
		}
		_, err := d.value(false)
		return err
	})
	if err != nil {
		return ""
	}
	return agent
}

// decodeFields decodes the members of the object raw into the fields of
// the struct v whose json tags name them, as encoding/json decodes them,
// and returns the keys whose values did not fit.
func decodeFields(raw MetaJSON, v reflect.Value) (bad []string, err error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d := decoder{b: raw, s: string(raw)}
	d.ws()
	if d.peek() != '{' {
		return nil, errors.New("not an object")
	}
	fields := metaFields(v.Type())
	err = d.members(true, func(k string, _ bool) error {
		i, ok := fields[k]
		if !ok || d.literal("null") {
			_, err := d.value(false)
			return err
		}
		fits, err := d.decodeValue(v.Field(i))
		if !fits {
			bad = append(bad, k)
		}
		return err
	})
	return bad, err
}

// decodeValue decodes the value at d.i into f (a string, bool, int,
// int64, float64, []string or a pointer to one of them) as encoding/json
// would decode it into any and then into f: fits is false, and f left as
// it was, when the value is of another type (a number that is not an
// integer, or beyond 2^53, for an int). A []string keeps the strings of
// the array and skips its other elements. err is a syntax error.
func (d *decoder) decodeValue(f reflect.Value) (fits bool, err error) {
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		if fits, err = d.decodeValue(p.Elem()); fits && err == nil {
			f.Set(p)
		}
		return fits, err
	}
	c := d.peek()
	number := c == '-' || c >= '0' && c <= '9'
	switch k := f.Kind(); {
	case k == reflect.String && c == '"':
		s, err := d.str()
		f.SetString(s)
		return true, err
	case k == reflect.Bool && (c == 't' || c == 'f'):
		if d.literal("true") {
			f.SetBool(true)
			return true, nil
		}
		return d.literal("false"), nil
	case (k == reflect.Int || k == reflect.Int64 || k == reflect.Float64) && number:
		num, _, err := d.number()
		if err != nil {
			return false, err
		}
		n, perr := strconv.ParseFloat(string(num), 64)
		if k == reflect.Float64 {
			f.SetFloat(n)
			return perr == nil, nil
		}
		if perr != nil || n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return false, nil
		}
		f.SetInt(int64(n))
		return true, nil
	case k == reflect.Slice && c == '[':
		out := reflect.MakeSlice(f.Type(), 0, 4)
		err := d.members(false, func(string, bool) error {
			if d.peek() != '"' {
				_, err := d.value(false)
				return err
			}
			s, err := d.str()
			out = reflect.Append(out, reflect.ValueOf(s))
			return err
		})
		f.Set(out)
		return true, err
	}
	_, err = d.value(false)
	return false, err
}

var metaFieldCache sync.Map // reflect.Type -> map[json key]field index

func metaFields(t reflect.Type) map[string]int {
	if f, ok := metaFieldCache.Load(t); ok {
		return f.(map[string]int)
	}
	out := map[string]int{}
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			out[tag] = i
		}
	}
	metaFieldCache.Store(t, out)
	return out
}
