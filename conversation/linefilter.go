package conversation

import "bytes"

// skipLine reports whether a transcript line can be passed over without
// parsing: its top-level "type" is one agents.ParseTranscriptLine yields
// nothing for (progress, file-history-snapshot, queue-operation, ...), or it
// is a sidechain (subagent) line whose "isSidechain": true comes before its
// type. It reads only the top-level keys up to "type", skipping values
// without decoding them, so the bulk of a transcript (progress lines carry
// about 40% of its bytes) costs a memchr-speed pass instead of a full JSON
// decode. Whenever the line is not a shape it understands it answers false,
// and the full parser decides (and reports a line that is not JSON).
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
		i = skipValue(line, i)
		if i < 0 {
			return false
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
// or -1 when it does not end.
func stringEnd(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		// An odd run of backslashes before the quote escapes it.
		k := j - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (j-1-k)%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// skipValue returns the index just after the JSON value starting at b[i],
// or -1. Nested values are skipped by counting brackets outside strings;
// they are not validated (the parser does that for lines it reads).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' {
			i++
		}
		return i
	}
}
