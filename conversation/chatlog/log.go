package chatlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/safeio"
)

// Entry is one line of log.jsonl, the derived chat log.
type Entry struct {
	At     time.Time `json:"at"`
	Role   string    `json:"role"` // "user" or "agent"
	Text   string    `json:"text"`
	ID     string    `json:"id,omitempty"`
	Source string    `json:"source,omitempty"`
}

// maxText caps the text of a log.jsonl entry: a longer reply is cut
// (the full text stays in the transcript), so one entry never hides the
// rest of the log from a reader.
const maxText = 32 << 10

// MaxLine caps a log.jsonl line a reader parses; a longer one (written
// by something else) is skipped and counted, and reading goes on.
const MaxLine = 1 << 20

// Append appends e to the log.jsonl at path (one write, O_APPEND, never
// through a link), its text cut to maxText.
func Append(path string, e Entry) error {
	if len(e.Text) > maxText {
		cut := maxText
		for cut > 0 && !utf8.RuneStart(e.Text[cut]) {
			cut--
		}
		e.Text = e.Text[:cut] + fmt.Sprintf("… [%d more bytes in the session's transcript]", len(e.Text)-cut)
	}
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := safeio.OpenAppend(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// Read returns the newest keep entries of the log.jsonl at path, oldest
// first, and how many lines it skipped (not an entry, or over MaxLine:
// passed over without being held in memory; entries with no text). A
// missing log is no entries.
func Read(path string, keep int) ([]Entry, int, error) {
	f, err := safeio.OpenChecked(path, os.O_RDONLY, 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []Entry
	skipped := 0
	br := bufio.NewReaderSize(f, 64<<10)
	var acc []byte
	tooLong := false
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong && len(acc)+len(frag) > MaxLine {
				tooLong, acc = true, acc[:0]
			}
			if !tooLong {
				acc = append(acc, frag...)
			}
			continue
		}
		line := frag
		if len(acc) > 0 || tooLong {
			if !tooLong && len(acc)+len(frag) <= MaxLine {
				line = append(acc, frag...)
			} else {
				line, tooLong = nil, true
			}
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var e Entry
			if tooLong || json.Unmarshal(line, &e) != nil || e.Text == "" {
				skipped++
			} else {
				out = append(out, e)
				if len(out) > 2*keep {
					out = append(out[:0], out[len(out)-keep:]...)
				}
			}
		}
		acc, tooLong = acc[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return out, skipped, err
		}
	}
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out, skipped, nil
}
