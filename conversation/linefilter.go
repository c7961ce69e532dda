package conversation

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// skipLine reports whether a transcript line can be passed over without
// parsing: its top-level "type" is one agents.ParseTranscriptLine yields
// nothing for (progress, file-history-snapshot, queue-operation, ...), or it
// is a sidechain (subagent) line whose "isSidechain": true comes before its
// type. It reads only the scalar top-level values up to "type" (Claude Code
// writes the type before any nested value), so the bulk of a transcript
// (progress lines carry about 40% of its bytes) costs a few hundred bytes
// of scanning each. Whenever the line is not a shape it understands (a
// nested value before the type, say) it answers false, and the parser
// decides (and reports a line that is not JSON).
func skipLine(line []byte) bool {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i++
	sidechain := false
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return false
		}
		key := line[i+1 : end-1]
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		if i >= len(line) {
			return false
		}
		switch {
		case string(key) == "type":
			if line[i] != '"' {
				return false
			}
			end := stringEnd(line, i)
			if end < 0 {
				return false
			}
			switch string(line[i+1 : end-1]) {
			case "assistant", "user", "system", "attachment":
				return sidechain
			}
			return !bytes.ContainsRune(line[i+1:end-1], '\\')
		case string(key) == "isSidechain":
			sidechain = bytes.HasPrefix(line[i:], []byte("true"))
		}
		switch line[i] {
		case '"':
			i = stringEnd(line, i)
			if i < 0 {
				return false
			}
		case '{', '[':
			return false // a nested value before the type: let the parser see it
		default: // number, true, false, null
			for i < len(line) && line[i] != ',' && line[i] != '}' && line[i] != ' ' {
				i++
			}
		}
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != ',' {
			return false // the end of the object, or not JSON: let the parser see it
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index just after the string starting at b[i] ('"'),
// or -1 when it does not end. Eight bytes are examined at a time for a
// quote or a backslash.
func stringEnd(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i++
	for i < len(b) {
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i : i+8])
			q, bs := x^(ones*'"'), x^(ones*'\\')
			m := ((q-ones)&^q | (bs-ones)&^bs) & highs
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return -1
}
