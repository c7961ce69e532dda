package conversation

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// skipLine reports whether a transcript line can be passed over without
// parsing, because agents.ParseTranscriptLine surely yields nothing for it:
//   - its top-level "type" is one the parser shows nothing for (progress,
//     file-history-snapshot, queue-operation, api-request-shape, ...);
//   - it is an "attachment" whose attachment.type is not queued_command
//     (skill_listing, prompt_snapshot, ...: the bulk of a 2.1.328
//     transcript's bytes), or a queued_command in neither
//     task-notification nor prompt mode;
//   - it is a sidechain (subagent) line ("isSidechain": true).
//
// A top-level "message" met before the type ends the scan with false: the
// lines that carry one are the assistant and user lines the parser reads,
// and Claude Code writes an assistant line's type after its message.
//
// It reads the top-level keys (and the attachment's) and passes over every
// other value without looking inside it: a nested object or array is
// skipped by a scan for quotes and brackets alone, a string by finding its
// closing quote with memchr (see stringEnd), which finds a value's end
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
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	var (
		typ                  []byte
		haveType, sidechain  bool
		seenSide, seenAttach bool
		attachSkip           bool // the attachment is one the parser shows nothing for
	)
	i = skipSpace(line, i+1)
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
			end := stringEnd(line, v)
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
		case foldsTo(key, "type", "isSidechain", "attachment"):
			return false // encoding/json would take it for the field: let it
		default:
			if i = skipValue(line, v); i < 0 {
				return false
			}
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return false
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return false
		}
		i = skipSpace(line, i+1)
	}
	if skipSpace(line, i+1) != len(line) || !haveType {
		return false
	}
	if sidechain {
		return true
	}
	if string(typ) == "attachment" {
		return attachSkip
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
	end := stringEnd(b, i)
	if end < 0 {
		return nil, 0, false
	}
	key = b[i+1 : end-1]
	if !plainKey(key) {
		return nil, 0, false
	}
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	i = skipSpace(b, i+1)
	if i >= len(b) {
		return nil, 0, false
	}
	return key, i, true
}

// plainKey: a key without escapes or non-ASCII bytes (eight bytes at a
// time, then one by one).
func plainKey(k []byte) bool {
	for len(k) >= 8 {
		x := binary.LittleEndian.Uint64(k)
		if x&highs|zeroBytes(x^(ones*'\\')) != 0 {
			return false // a byte >= 0x80, or a backslash (zeroBytes has no false positive without a true one)
		}
		k = k[8:]
	}
	for _, c := range k {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// skipAttachment reads the attachment object at b[i] ('{'): its end (-1
// when unsure) and whether the parser shows nothing for it (its type a
// plain string other than queued_command, or a queued_command whose
// commandMode is a plain string other than task-notification and prompt).
func skipAttachment(b []byte, i int) (int, bool) {
	var typ, mode []byte
	haveType, haveMode := false, false
	i = skipSpace(b, i+1)
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
			end := stringEnd(b, v)
			if end < 0 || bytes.IndexByte(b[v+1:end-1], '\\') >= 0 {
				return -1, false
			}
			*dst, *have = b[v+1:end-1], true
			i = end
		case foldsTo(key, "type", "commandMode"):
			return -1, false
		default:
			if i = skipValue(b, v); i < 0 {
				return -1, false
			}
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return -1, false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return -1, false
		}
		i = skipSpace(b, i+1)
	}
	switch {
	case !haveType:
		return i + 1, false
	case string(typ) != "queued_command":
		return i + 1, true
	default:
		// task-notification: a Monitor event; prompt: a message posted to
		// the messaging socket, absorbed by a busy turn (or a prompt the
		// user typed while it ran), which the parser reads.
		return i + 1, haveMode && string(mode) != "task-notification" && string(mode) != "prompt"
	}
}

// foldsTo reports whether key equals one of names ignoring ASCII case (as
// encoding/json matches field names; keys here are ASCII).
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		// The first bytes' ASCII case first: a cheap necessary condition.
		if len(n) == len(key) && len(n) > 0 && key[0]|0x20 == n[0]|0x20 && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// skipValue returns the index after the value at b[i], or -1.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	// A number, true, false or null.
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		if b[i] == '"' || b[i] == '{' || b[i] == '[' {
			return -1
		}
		i++
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes has the high bit set at the lowest byte of x that is zero (and
// possibly at higher ones: only the lowest set bit is exact).
func zeroBytes(x uint64) uint64 { return (x - ones) &^ x & highs }

// skipNested returns the index after the object or array at b[i], found by
// counting brackets outside strings (exact for valid JSON), or -1 when the
// line ends first. Outside strings eight bytes are examined at a time for
// a quote or a bracket ('[' | 0x20 is '{' and ']' | 0x20 is '}', so two
// compares find all four); strings are passed over by stringEnd.
func skipNested(b []byte, i int) int {
	depth := 0
	for {
		// Outside strings.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			y := x | ones*0x20
			if m := zeroBytes(x^(ones*'"')) | zeroBytes(y^(ones*'{')) | zeroBytes(y^(ones*'}')); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] != '"' && b[i]|0x20 != '{' && b[i]|0x20 != '}' {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			if i = stringEnd(b, i); i < 0 {
				return -1
			}
		case c|0x20 == '{':
			depth++
			i++
		default:
			depth--
			i++
			if depth == 0 {
				return i
			}
		}
	}
}

// skipSpace returns the index of the first byte from b[i] on that is not
// JSON whitespace. Claude Code writes none: one compare decides that case.
func skipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index just after the string starting at b[i] ('"'),
// or -1 when it does not end. It looks for quotes alone (the first eight
// bytes as one word, then with bytes.IndexByte, at memchr speed) and takes
// a quote for the end when an even number of backslashes precede it (in
// valid JSON an escaped quote has an odd run before it), so the
// backslashes of a string cost nothing unless they sit before a quote.
func stringEnd(b []byte, i int) int {
	i++
	for {
		q := -1
		if i+8 <= len(b) {
			if m := zeroBytes(binary.LittleEndian.Uint64(b[i:]) ^ (ones * '"')); m != 0 {
				q = i + bits.TrailingZeros64(m)>>3
			} else {
				i += 8
			}
		}
		if q < 0 {
			if i >= len(b) {
				return -1
			}
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return -1
			}
			q += i
		}
		j := q - 1
		for b[j] == '\\' {
			j--
		}
		if (q-1-j)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}
