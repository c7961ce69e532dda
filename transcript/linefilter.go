package transcript

import (
	"bytes"

	"github.com/relay-baton/relay-baton/events"
)

// skipLine reports whether a transcript line can be passed over without
// parsing, because ParseLine surely yields nothing for it:
//   - its top-level "type" is one the parser shows nothing for (progress,
//     file-history-snapshot, queue-operation, api-request-shape, ...);
//   - it is an "attachment" whose attachment.type is not queued_command
//     (skill_listing, prompt_snapshot, ...: the bulk of a 2.1.328
//     transcript's bytes), or a queued_command in neither
//     task-notification nor prompt mode;
//   - it is a sidechain (subagent) line ("isSidechain": true);
//   - it is an "api-request" that is not a retry (a base and an empty
//     tail: retriedRequest).
//
// A top-level "message" met before the type ends the scan with false: the
// lines that carry one are the assistant and user lines the parser reads,
// and Claude Code writes an assistant line's type after its message.
//
// It reads the top-level keys (and the attachment's) and passes over every
// other value without looking inside it: a nested object or array is
// skipped by a scan for quotes and brackets alone, a string by finding its
// closing quote with memchr (see events.JSONStringEnd), which finds a value's end
// exactly in valid JSON. A type the parser reads (assistant, user, system)
// ends the scan at once with false; otherwise the line is read to its
// end, so that a repeated or case-folded key (encoding/json takes the last
// one, and matches keys ignoring case) cannot hide a type. Whenever anything is not plainly what it expects (an
// escaped or non-ASCII key at those levels, a key repeated, a key that
// matches only ignoring case, a type that is not a plain string, a line
// that does not end where its object does) it answers false and the parser
// decides. A skipped line is not validated beyond that scan: JSON broken
// inside a nested value of a skipped line is passed over like the rest
// (it would yield no activity either, only a notice).
func skipLine(line []byte) bool {
	i := events.JSONSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	var (
		typ                  []byte
		haveType, sidechain  bool
		seenSide, seenAttach bool
		attachSkip           bool // the attachment is one the parser shows nothing for
		seenBase, seenTail   bool
		retryShape           int // an api-request's base (1) and empty tail (2) seen: a retry may be
	)
	i = events.JSONSpace(line, i+1)
	for {
		key, v, ok := member(line, i)
		if !ok {
			return false
		}
		switch {
		case string(key) == "type":
			if haveType || line[v] != '"' {
				return false
			}
			end := events.JSONStringEnd(line, v)
			if end < 0 {
				return false
			}
			typ, haveType = line[v+1:end-1], true
			i = end
			if !sidechain && keptType(typ, seenAttach, attachSkip) {
				return false // the parser reads it: no need to look further
			}
		case string(key) == "isSidechain":
			if seenSide {
				return false
			}
			seenSide = true
			switch {
			case bytes.HasPrefix(line[v:], []byte("true")):
				sidechain, i = true, v+4
			case bytes.HasPrefix(line[v:], []byte("false")):
				i = v + 5
			default:
				return false
			}
		case string(key) == "attachment":
			if seenAttach || line[v] != '{' {
				return false
			}
			seenAttach = true
			i, attachSkip = skipAttachment(line, v)
			if i < 0 {
				return false
			}
		case !haveType && !sidechain && string(key) == "message":
			// An assistant or user line, whose type Claude Code writes
			// after its message: rather than walk the message only to
			// find that type, let the parser decide at once.
			return false
		case string(key) == "base" || string(key) == "tail":
			// An api-request line's: a retry names a base and adds an
			// empty tail (the parser shows it).
			if seenBase && key[0] == 'b' || seenTail && key[0] == 't' {
				return false
			}
			if key[0] == 'b' {
				seenBase = true
				if line[v] == '"' && line[v+1] != '"' {
					retryShape |= 1
				}
			} else {
				seenTail = true
				if line[v] == '[' && line[events.JSONSpace(line, v+1)] == ']' {
					retryShape |= 2
				}
			}
			if i = events.JSONSkip(line, v); i < 0 {
				return false
			}
		case events.JSONKeyFolds(key, "type", "isSidechain", "attachment", "base", "tail"):
			return false // encoding/json would take it for the field: let it
		default:
			if i = events.JSONSkip(line, v); i < 0 {
				return false
			}
		}
		next, done := events.JSONNext(line, i, '}')
		if next < 0 {
			return false
		}
		if i = next; done {
			break
		}
	}
	if events.JSONSpace(line, i) != len(line) || !haveType {
		return false
	}
	if sidechain {
		return true
	}
	if string(typ) == "attachment" {
		return attachSkip
	}
	if string(typ) == "api-request" {
		return retryShape != 3 // a first request, or one after a tool call: nothing to show
	}
	return !keptType(typ, seenAttach, attachSkip)
}

// keptType: a line of type typ is one the parser may show something for
// (an attachment only once its attachment was seen to be skippable).
func keptType(typ []byte, seenAttach, attachSkip bool) bool {
	switch string(typ) {
	case "assistant", "user", "system":
		return true
	case "attachment":
		return seenAttach && !attachSkip
	}
	return bytes.IndexByte(typ, '\\') >= 0
}

// member reads the key of the object member at b[i] (a plain key: no
// escapes, ASCII only, else ok=false) and returns it with the index of its
// value.
func member(b []byte, i int) (key []byte, v int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end := events.JSONStringEnd(b, i)
	if end < 0 {
		return nil, 0, false
	}
	key = b[i+1 : end-1]
	if !events.JSONPlainKey(key) {
		return nil, 0, false
	}
	i = events.JSONSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	i = events.JSONSpace(b, i+1)
	if i >= len(b) {
		return nil, 0, false
	}
	return key, i, true
}

// skipAttachment reads the attachment object at b[i] ('{'): its end (-1
// when unsure) and whether the parser shows nothing for it (its type a
// plain string other than queued_command, or a queued_command whose
// commandMode is a plain string other than task-notification and prompt).
func skipAttachment(b []byte, i int) (int, bool) {
	var typ, mode []byte
	haveType, haveMode := false, false
	i = events.JSONSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return -1, false // {}: rare, the parser decides
	}
	for {
		key, v, ok := member(b, i)
		if !ok {
			return -1, false
		}
		switch {
		case string(key) == "type" || string(key) == "commandMode":
			dst, have := &typ, &haveType
			if key[0] == 'c' {
				dst, have = &mode, &haveMode
			}
			if *have || b[v] != '"' {
				return -1, false
			}
			end := events.JSONStringEnd(b, v)
			if end < 0 || bytes.IndexByte(b[v+1:end-1], '\\') >= 0 {
				return -1, false
			}
			*dst, *have = b[v+1:end-1], true
			i = end
		case events.JSONKeyFolds(key, "type", "commandMode"):
			return -1, false
		default:
			if i = events.JSONSkip(b, v); i < 0 {
				return -1, false
			}
		}
		next, done := events.JSONNext(b, i, '}')
		if next < 0 {
			return -1, false
		}
		if i = next; done {
			break
		}
	}
	switch {
	case !haveType:
		return i, false
	case string(typ) != "queued_command":
		return i, true
	default:
		// task-notification: a Monitor event; prompt: a message posted to
		// the messaging socket, absorbed by a busy turn (or a prompt the
		// user typed while it ran), which the parser reads.
		return i, haveMode && string(mode) != "task-notification" && string(mode) != "prompt"
	}
}
