package transcript

import (
	"bytes"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
)

// This file is the single-pass path of ParseLine. It validates a
// line as JSON with a hand-written scanner (strings are searched eight
// bytes at a time for a quote, a backslash or a control byte), records
// where the fields the activities need are, and decodes only those: the
// type, the session id and time, the content blocks of an assistant or
// user message, a system line's subtype and hook verdict. A tool result
// shows only its first agentmsg.ResultRunes runes, so only a prefix of its
// text is decoded.
//
// It mirrors what encoding/json makes of the same line (duplicate keys:
// the last wins; a field of the wrong type: the line yields nothing), and
// wherever a line is of a shape where the two could differ (a key that
// matches a field only case-insensitively, an escaped key, null where a
// field is expected, a number float64 cannot hold, attachment lines, which
// are rare once skipLine has passed over most of them) it gives up and parseTranscriptLineJSON, the
// encoding/json path, decides. TestFastTranscriptMatchesJSON and
// FuzzFastTranscriptLine hold the two to the same output.

// fastTranscriptLine parses line (already trimmed); ok=false means "use
// encoding/json" (the line is not JSON, or of a shape left to it).
func fastTranscriptLine(line []byte) (acts []events.Activity, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return nil, false
	}
	s := jscan{b: line}
	var top topLine
	top.init()
	end := s.object(0, 0, top.field, top.deep)
	if end < 0 || s.bad || events.JSONSpace(s.b, end) != len(line) {
		return nil, false
	}
	if top.other {
		return nil, false // attachments: rare beside skipLine, left to encoding/json
	}
	if top.isSidechain {
		return nil, true
	}
	assistant := s.eq(top.typ, "assistant")
	switch {
	case assistant, s.eq(top.typ, "user"):
	case s.eq(top.typ, "system"):
		return top.system(&s)
	case s.eq(top.typ, "api-request"):
		// retriedRequest: a base, and a tail that adds nothing.
		if base, ok := s.str(top.base); !ok || base == "" || !top.haveTail || !top.noneNew {
			return nil, ok
		}
		id, ok := s.str(top.uuid)
		if !ok {
			return nil, false
		}
		return top.stamp(&s, []events.Activity{{Source: Source, Kind: events.ActError, Detail: RetryDetail, Text: RetryText, ID: id}})
	case s.eq(top.typ, "attachment"):
		return nil, false
	default:
		return nil, true // progress, file-history-snapshot, ...: nothing to show
	}
	if top.message.start < 0 {
		return nil, true
	}
	m := &top.msg
	if assistant {
		acts = m.activities(&s)
		if s.bad {
			return nil, false
		}
		if s.eq(m.stopReason, "end_turn") && hasOutput(acts) {
			id, _ := s.str(m.id)
			acts = append(acts, events.Activity{Source: Source, Kind: events.ActDone, StopReason: "end_turn", ID: id})
		}
	} else {
		text, isText := m.userText(&s)
		if s.bad {
			return nil, false
		}
		if isText {
			turnOrigin, ok1 := s.str(top.turnOrigin)
			if !ok1 {
				return nil, false
			}
			if lane, body, ok := deliveredText(top.isMeta, turnOrigin, text); ok {
				id, ok2 := s.str(top.uuid)
				if !ok2 {
					return nil, false
				}
				acts = []events.Activity{{Source: Source, Kind: events.ActDelivered, Detail: lane, Text: body, ID: id}}
				return top.stamp(&s, acts)
			}
			if top.isMeta {
				return nil, true
			}
		}
		acts = m.activities(&s)
		if s.bad {
			return nil, false
		}
	}
	return top.stamp(&s, acts)
}

// span is a value's place in the line: [start, end); for a string the
// quotes are excluded. start < 0: absent.
type span struct {
	start, end int
}

var noSpan = span{start: -1}

// topLine holds the top-level fields the activities need.
type topLine struct {
	set                        bool
	typ, turnOrigin, uuid      span
	timestamp, sessionID       span
	message                    span
	msg                        fastMessage
	isSidechain, isMeta, other bool
	// A system line's: its subtype, and a stop_hook_summary's verdict.
	subtype                          span
	hookErrors, prevented, hasOutput bool
	// An api-request line's: the request it repeats (base) and whether it
	// adds nothing to it (an empty tail array).
	base              span
	haveTail, noneNew bool
}

// system mirrors the "system" case of parseTranscriptLineJSON: the end of
// a turn, as turn_duration or as a Stop hook summary where no hook blocked.
func (t *topLine) system(s *jscan) ([]events.Activity, bool) {
	var stop string
	switch {
	case s.eq(t.subtype, "turn_duration"):
		stop = "turn_duration"
	case s.eq(t.subtype, "stop_hook_summary") && !t.hookErrors && !t.prevented && !t.hasOutput:
		stop = "stop_hook_summary"
	default:
		return nil, true
	}
	id, _ := s.str(t.uuid)
	return t.stamp(s, []events.Activity{{Source: Source, Kind: events.ActDone, StopReason: stop, ID: id}})
}

// deep parses the message while the line is validated (one pass).
func (t *topLine) deep(s *jscan, key []byte, i, depth int) (int, bool) {
	if string(key) != "message" || s.b[i] != '{' {
		return 0, false
	}
	end := t.msg.parse(s, i, depth)
	t.message = span{i, end}
	return end, true
}

func (t *topLine) init() {
	if !t.set {
		t.set = true
		t.typ, t.turnOrigin, t.uuid, t.timestamp, t.sessionID, t.message, t.subtype, t.base = noSpan, noSpan, noSpan, noSpan, noSpan, noSpan, noSpan, noSpan
	}
}

// field records one top-level key's value; false when the line is of a
// shape left to encoding/json.
func (t *topLine) field(s *jscan, key []byte, v span, kind byte) bool {
	t.init()
	switch string(key) {
	case "type":
		return strField(kind, &t.typ, v)
	case "turnOrigin":
		return strField(kind, &t.turnOrigin, v)
	case "uuid":
		return strField(kind, &t.uuid, v)
	case "timestamp":
		return strField(kind, &t.timestamp, v)
	case "sessionId":
		return strField(kind, &t.sessionID, v)
	case "message":
		return kind == '{' && set(&t.message, v)
	case "isSidechain":
		return boolField(kind, &t.isSidechain)
	case "isMeta":
		return boolField(kind, &t.isMeta)
	case "subtype":
		return strField(kind, &t.subtype, v)
	case "preventedContinuation":
		return boolField(kind, &t.prevented)
	case "hasOutput":
		return boolField(kind, &t.hasOutput)
	case "hookErrors":
		switch kind {
		case 'n': // null: no errors ([]json.RawMessage(nil))
			t.hookErrors = false
		case '[':
			t.hookErrors = s.b[events.JSONSpace(s.b, v.start+1)] != ']'
		default:
			return false
		}
		return true
	case "attachment":
		t.other = true
		return true
	case "base":
		return strField(kind, &t.base, v)
	case "tail":
		switch kind {
		case 'n': // null: a nil slice, as encoding/json makes it
			t.haveTail, t.noneNew = false, false
		case '[':
			t.haveTail, t.noneNew = true, s.b[events.JSONSpace(s.b, v.start+1)] == ']'
		default:
			return false
		}
		return true
	}
	return !events.JSONKeyFolds(key, "type", "isSidechain", "isMeta", "turnOrigin", "timestamp", "sessionId", "uuid", "message", "subtype", "hookErrors", "preventedContinuation", "hasOutput", "attachment", "base", "tail")
}

func set(dst *span, v span) bool { *dst = v; return true }

// strField takes a string value; null leaves the field as it was (as
// encoding/json does); other types are left to encoding/json.
func strField(kind byte, dst *span, v span) bool {
	switch kind {
	case '"':
		*dst = v
	case 'n':
	default:
		return false
	}
	return true
}

// boolField takes a true/false literal (kind 't' or 'f'); null leaves it
// as it was; other types are left to encoding/json.
func boolField(kind byte, dst *bool) bool {
	switch kind {
	case 't':
		*dst = true
	case 'f':
		*dst = false
	case 'n': // null leaves it as it was
	default:
		return false
	}
	return true
}

func (t *topLine) stamp(s *jscan, acts []events.Activity) ([]events.Activity, bool) {
	if len(acts) == 0 {
		return acts, true
	}
	sid, ok1 := s.str(t.sessionID)
	ts, ok2 := s.str(t.timestamp)
	if !ok1 || !ok2 {
		return nil, false
	}
	var at time.Time
	if ts != "" {
		at, _ = time.Parse(time.RFC3339Nano, ts)
	}
	for i := range acts {
		acts[i].Session = sid
		acts[i].Time = at
	}
	return acts, true
}

// fastMessage is an Anthropic message's fields (see anthropicMessage).
type fastMessage struct {
	id, role, stopReason span
	content              span
	contentKind          byte
	blocks               []fastBlock // when content is an array
}

// parse walks (and validates) the message object at b[i].
func (m *fastMessage) parse(s *jscan, i, depth int) int {
	m.id, m.role, m.stopReason, m.content, m.contentKind = noSpan, noSpan, noSpan, noSpan, 0
	return s.object(i, depth, func(s *jscan, key []byte, v span, kind byte) bool {
		switch string(key) {
		case "id":
			return strField(kind, &m.id, v)
		case "role":
			return strField(kind, &m.role, v)
		case "stop_reason":
			return strField(kind, &m.stopReason, v)
		case "content":
			if kind != '"' {
				return false
			}
			m.contentKind = kind
			return set(&m.content, v)
		case "usage":
			return kind == 'n' // an object is checked by deep as it is walked
		}
		return !events.JSONKeyFolds(key, "id", "role", "stop_reason", "content", "usage")
	}, func(s *jscan, key []byte, i, depth int) (int, bool) {
		if string(key) == "usage" && s.b[i] == '{' {
			return s.object(i, depth, usageField, nil), true
		}
		if string(key) != "content" || s.b[i] != '[' {
			return 0, false
		}
		m.blocks = m.blocks[:0]
		end := s.array(i, func(j int, kind byte) int {
			if kind != '{' {
				s.bad = true
				return -1
			}
			m.blocks = append(m.blocks, fastBlock{})
			return m.blocks[len(m.blocks)-1].parse(s, j, depth+1, false)
		})
		m.contentKind, m.content = '[', span{i, end}
		return end, true
	})
}

// usageField checks a usage object's token counts decode as int64, as
// anthropicUsage needs, while the object is walked (once).
func usageField(s *jscan, key []byte, v span, kind byte) bool {
	switch string(key) {
	case "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens":
		return kind == 'n' || kind == '0' && smallInt(s.b[v.start:v.end])
	}
	return !events.JSONKeyFolds(key, "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
}

// smallInt: an integer literal that surely fits int64.
func smallInt(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fastBlock is a content block's fields (see contentBlock).
type fastBlock struct {
	typ, text, thinking, id, name, toolUseID span
	input, content                           span
	detail                                   span   // ToolDetail's field of an object input
	parts                                    []span // a tool result's text blocks
	contentKind                              byte
	isError                                  bool
}

// parse walks (and validates) the block object at b[i]. A top-level block
// (not nested) also reads its tool input's detail and its tool result's
// text blocks.
func (b *fastBlock) parse(s *jscan, i, depth int, nested bool) int {
	*b = fastBlock{typ: noSpan, text: noSpan, thinking: noSpan, id: noSpan, name: noSpan, toolUseID: noSpan, input: noSpan, content: noSpan, detail: noSpan}
	var deep func(s *jscan, key []byte, i, depth int) (int, bool)
	if !nested {
		deep = b.deep
	}
	return s.object(i, depth, func(s *jscan, key []byte, v span, kind byte) bool {
		switch string(key) {
		case "type":
			return strField(kind, &b.typ, v)
		case "text":
			return strField(kind, &b.text, v)
		case "thinking":
			return strField(kind, &b.thinking, v)
		case "id":
			return strField(kind, &b.id, v)
		case "name":
			return strField(kind, &b.name, v)
		case "tool_use_id":
			return strField(kind, &b.toolUseID, v)
		case "input":
			b.detail = noSpan
			return set(&b.input, v)
		case "content":
			b.contentKind, b.parts = kind, nil
			return set(&b.content, v)
		case "is_error":
			return boolField(kind, &b.isError)
		}
		return !events.JSONKeyFolds(key, "type", "text", "thinking", "id", "name", "tool_use_id", "input", "content", "is_error")
	}, deep)
}

// deep reads a tool input's detail field and a tool result's text blocks
// while they are validated.
func (b *fastBlock) deep(s *jscan, key []byte, i, depth int) (int, bool) {
	switch {
	case string(key) == "input" && s.b[i] == '{':
		var buf [16]span // len(agentmsg.DetailKeys) is 12: no allocation
		found := buf[:len(agentmsg.DetailKeys)]
		for k := range found {
			found[k] = noSpan
		}
		end := s.object(i, depth, func(s *jscan, key []byte, v span, kind byte) bool {
			for k, name := range agentmsg.DetailKeys {
				if string(key) == name {
					if kind == '"' {
						found[k] = v
					} else {
						found[k] = noSpan
					}
				}
			}
			return true
		}, nil)
		b.input, b.detail = span{i, end}, noSpan
		for k := range agentmsg.DetailKeys {
			if v := found[k]; v.start >= 0 && v.end > v.start {
				b.detail = v
				break
			}
		}
		return end, true
	case string(key) == "content" && s.b[i] == '[':
		b.parts = b.parts[:0]
		var inner fastBlock
		end := s.array(i, func(j int, kind byte) int {
			if kind != '{' {
				s.bad = true
				return -1
			}
			e := inner.parse(s, j, depth+1, true)
			if e < 0 {
				return -1
			}
			if s.eq(inner.typ, "text") && inner.text.start >= 0 {
				b.parts = append(b.parts, inner.text)
			}
			return e
		})
		b.contentKind, b.content = '[', span{i, end}
		return end, true
	}
	return 0, false
}

// userText mirrors userText: the text of a content that is a string or
// only text blocks.
func (m *fastMessage) userText(s *jscan) (string, bool) {
	switch m.contentKind {
	case '"':
		t, ok := s.str(m.content)
		if !ok {
			s.bad = true
		}
		return t, ok
	case '[':
		var sb strings.Builder
		for i := range m.blocks {
			b := &m.blocks[i]
			if !s.eq(b.typ, "text") {
				return "", false
			}
			t, _ := s.str(b.text)
			sb.WriteString(t)
		}
		if len(m.blocks) == 0 {
			return "", false
		}
		return sb.String(), true
	}
	return "", false
}

// activities mirrors anthropicMessage.activities.
func (m *fastMessage) activities(s *jscan) []events.Activity {
	id, ok := s.str(m.id)
	if !ok {
		s.bad = true
		return nil
	}
	textKind := events.ActText
	if s.eq(m.role, "user") {
		textKind = events.ActUser
	}
	switch m.contentKind {
	case '"':
		t, ok := s.str(m.content)
		if !ok {
			s.bad = true
			return nil
		}
		return []events.Activity{{Source: Source, Kind: textKind, Text: t, ID: id}}
	case '[':
	default:
		return nil
	}
	out := make([]events.Activity, 0, len(m.blocks)+1) // +1: the end of turn
	str := func(v span) string {
		t, ok := s.str(v)
		if !ok {
			s.bad = true
		}
		return t
	}
	for i := range m.blocks {
		b := &m.blocks[i]
		switch {
		case s.eq(b.typ, "text"):
			out = append(out, events.Activity{Source: Source, Kind: textKind, Text: str(b.text), ID: id})
		case s.eq(b.typ, "thinking"), s.eq(b.typ, "redacted_thinking"):
			out = append(out, events.Activity{Source: Source, Kind: events.ActThinking, Text: str(b.thinking), ID: id})
		case s.eq(b.typ, "tool_use"), s.eq(b.typ, "server_tool_use"):
			name := str(b.name)
			out = append(out, events.Activity{Source: Source, Kind: events.ActTool, Tool: name, Detail: s.toolDetail(b), ID: str(b.id)})
		case s.eq(b.typ, "tool_result"):
			out = append(out, events.Activity{Source: Source, Kind: events.ActToolResult, Text: s.toolResultLine(b), IsError: b.isError, ID: str(b.toolUseID)})
		}
	}
	if s.bad {
		return nil
	}
	return out
}

// toolDetail mirrors ToolDetail without decoding the whole input: the
// input's top-level string fields named in agentmsg.DetailKeys (found by
// fastBlock.deep, the last of each name winning as in a map).
func (s *jscan) toolDetail(b *fastBlock) string {
	if b.input.start < 0 || s.b[b.input.start] != '{' || b.detail.start < 0 {
		return ""
	}
	f := folder{n: agentmsg.DetailRunes}
	f.addJSON(s.b[b.detail.start:b.detail.end])
	return f.String()
}

// toolResultLine is render.Cut(toolResultText(content), agentmsg.ResultRunes), folding the
// text straight from the line's bytes and stopping once the line is full:
// a long tool result is decoded only as far as it shows.
func (s *jscan) toolResultLine(b *fastBlock) string {
	parts := b.parts
	switch b.contentKind {
	case '"':
		parts = []span{b.content}
	case '[':
	default:
		return "" // null, an object, a literal: toolResultText gives ""
	}
	f := folder{n: agentmsg.ResultRunes}
	for _, p := range parts {
		if !f.addJSON(s.b[p.start:p.end]) {
			break
		}
	}
	return f.String()
}

// folder computes render.Cut(text, n) rune by rune: whitespace runs fold to
// one space, leading and trailing ones go, and past n runes the line is cut
// to n-1 and an ellipsis.
type folder struct {
	n, count int
	buf      []byte
	space    bool // a space is due before the next rune
	cut      int  // len(buf) after n-1 runes
}

// add takes one rune; false once the line is full (more than n runes).
func (f *folder) add(r rune) bool {
	if r < utf8.RuneSelf && asciiSpace[r] || r >= utf8.RuneSelf && unicode.IsSpace(r) {
		if f.count > 0 {
			f.space = true
		}
		return true
	}
	if f.space {
		f.space = false
		if !f.push(' ') {
			return false
		}
	}
	return f.push(r)
}

func (f *folder) push(r rune) bool {
	if f.count == f.n-1 {
		f.cut = len(f.buf)
	}
	f.buf = utf8.AppendRune(f.buf, r)
	f.count++
	return f.count <= f.n
}

// addJSON folds in the decoding of a JSON string body; false once full.
func (f *folder) addJSON(raw []byte) bool {
	if f.buf == nil {
		f.buf = make([]byte, 0, f.n+8)
	}
	for i := 0; i < len(raw); {
		if c := raw[i]; c < utf8.RuneSelf && c != '\\' {
			i++
			if asciiSpace[c] {
				if f.count > 0 {
					f.space = true
				}
				continue
			}
			if f.space {
				f.space = false
				if !f.push(' ') {
					return false
				}
			}
			if f.count == f.n-1 {
				f.cut = len(f.buf)
			}
			f.buf = append(f.buf, c)
			if f.count++; f.count > f.n {
				return false
			}
			continue
		}
		r, next := events.JSONRune(raw, i)
		i = next
		if !f.add(r) {
			return false
		}
	}
	return true
}

func (f *folder) String() string {
	if f.count > f.n {
		return string(f.buf[:f.cut]) + "…"
	}
	return string(f.buf)
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// jscan validates and walks one JSON line.
type jscan struct {
	b   []byte
	bad bool // a shape left to encoding/json (not an error in the line)
}

const maxFastDepth = 200

// eq reports whether the string span decodes to lit, an ASCII string (an
// absent span is ""), without allocating when there is no escape to decode.
func (s *jscan) eq(v span, lit string) bool {
	if v.start < 0 {
		return lit == ""
	}
	raw := s.b[v.start:v.end]
	if bytes.IndexByte(raw, '\\') < 0 {
		// Decoding could only replace invalid UTF-8, which cannot match
		// an ASCII lit either way.
		return string(raw) == lit
	}
	t, _ := s.str(v)
	return t == lit
}

// str decodes a string span as encoding/json would; an absent span is "".
func (s *jscan) str(v span) (string, bool) {
	if v.start < 0 {
		return "", true
	}
	raw := s.b[v.start:v.end]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), true
	}
	return events.JSONUnquote(raw), true
}

// object walks the object at b[i] ('{'), validating it, and calls fn with
// each key and its value's span and kind ('"', '{', '[', 't', 'f', 'n',
// '0' for a number). fn returning false marks the line bad. deep, when
// set, is offered each value first: it may walk (and validate) the value
// itself and return its end. object returns the index after the object, or
// -1 when it is not valid JSON (or is bad).
func (s *jscan) object(i, depth int, fn func(s *jscan, key []byte, v span, kind byte) bool, deep func(s *jscan, key []byte, i, depth int) (int, bool)) int {
	b := s.b
	if i >= len(b) || b[i] != '{' || depth > maxFastDepth {
		s.bad = s.bad || depth > maxFastDepth
		return -1
	}
	i = events.JSONSpace(s.b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		kend := events.JSONString(b, i)
		if kend < 0 {
			return -1
		}
		key := b[i+1 : kend-1]
		i = events.JSONSpace(s.b, kend)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		i = events.JSONSpace(s.b, i+1)
		if i >= len(b) {
			return -1
		}
		if fn != nil && !events.JSONPlainKey(key) {
			s.bad = true
			return -1
		}
		var end int
		handled := false
		if deep != nil {
			end, handled = deep(s, key, i, depth+1)
		}
		if !handled {
			kind := b[i]
			v := span{start: i}
			end = s.value(i, depth+1)
			if end < 0 {
				return -1
			}
			v.end = end
			switch kind {
			case '"':
				v.start, v.end = i+1, end-1
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				kind = '0'
			}
			if fn != nil && !fn(s, key, v, kind) {
				s.bad = true
			}
		}
		if end < 0 || s.bad {
			return -1
		}
		next, done := events.JSONNext(b, end, '}')
		if done || next < 0 {
			return next
		}
		i = next
	}
}

// array walks the array at b[i] ('['), calling fn with each element's
// start and kind; fn returns the element's end (-1 to stop). Without fn the
// elements are validated and skipped.
func (s *jscan) array(i int, fn func(i int, kind byte) int) int {
	b := s.b
	i = events.JSONSpace(s.b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(b) {
			return -1
		}
		end := fn(i, b[i])
		if end < 0 {
			return -1
		}
		next, done := events.JSONNext(b, end, ']')
		if done || next < 0 {
			return next
		}
		i = next
	}
}

// value validates the value at b[i] and returns the index after it, or -1.
func (s *jscan) value(i, depth int) int {
	b := s.b
	switch c := b[i]; c {
	case '"':
		return events.JSONString(b, i)
	case '{':
		return s.object(i, depth, nil, nil)
	case '[':
		if depth > maxFastDepth {
			s.bad = true
			return -1
		}
		return s.array(i, func(j int, _ byte) int { return s.value(j, depth+1) })
	case 't':
		return events.JSONLiteral(b, i, "true")
	case 'f':
		return events.JSONLiteral(b, i, "false")
	case 'n':
		return events.JSONLiteral(b, i, "null")
	default:
		end, risky := events.JSONNumber(b, i)
		if risky {
			s.bad = true // float64 may not hold it: encoding/json decides
		}
		return end
	}
}
