package events

import (
	"bytes"
	"fmt"
	"io"
	"slices"
)

// Located is an event with the byte offset at which its line starts.
type Located struct {
	Offset int64
	Event  Event
}

// Page is a run of events read backwards from the end of a log (or from a
// cursor), in file order.
type Page struct {
	Events []Located
	// Before is where the page starts: pass it as before to read the page
	// preceding this one. 0 means the start of the log was reached.
	Before int64
	// End is the offset just past the newest complete line of the read: a
	// Follow from End delivers exactly the events appended after the page.
	End   int64
	Stats Stats
}

// MaxBackScan bounds the bytes one ReadBack examines, so a filter that
// matches nothing cannot make a request read a huge log whole; the page
// then holds what was found and Before continues from there.
var MaxBackScan int64 = 32 << 20

// ReadBack reads the log at path backwards and returns the newest n events
// that keep accepts (nil keeps all) among those starting before offset
// before (before < 0 means the end of the file). It reads from the end in
// 64 KiB blocks, so the cost depends on n and the lines' sizes, not on the
// log's length. A last line without a newline (a writer may be mid-line) is
// left out, and End stops before it. Blank, malformed and oversized lines
// are skipped and counted, as Scan does.
func ReadBack(path string, before int64, n int, keep func(*Event) bool) (Page, error) {
	var pg Page
	f, err := openForRead(path)
	if err != nil {
		return pg, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return pg, fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	end := size
	if before >= 0 && before < size {
		end = before
	}
	pg.End = end
	if end == 0 || n <= 0 {
		return pg, nil
	}
	// Reading from the file's end: a last line with no newline is partial.
	partial := false
	if end == size {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return pg, fmt.Errorf("read %s: %w", path, err)
		}
		partial = last[0] != '\n'
	}

	const block = 64 << 10
	buf := make([]byte, block)
	var (
		out     []Located
		carry   []byte // the part of the current line read so far (its tail)
		tooLong bool
		first   = true // the segment ending at end
		cursor  = end  // start of the oldest segment fully examined
		scanned int64
		e       Event
	)
	// emit handles one complete segment starting at start; it reports
	// whether the page is full.
	emit := func(seg []byte, start int64) bool {
		cursor = start
		if first {
			first = false
			if partial {
				pg.End = start
				return false
			}
		}
		if tooLong {
			pg.Stats.Lines++
			pg.Stats.TooLong++
			return false
		}
		if len(bytes.TrimSpace(seg)) == 0 {
			return false
		}
		pg.Stats.Lines++
		if err := DecodeEvent(seg, &e); err != nil {
			pg.Stats.Malformed++
			if pg.Stats.FirstError == "" {
				pg.Stats.FirstError = err.Error()
			}
			return false
		}
		if keep != nil && !keep(&e) {
			return false
		}
		pg.Stats.Events++
		out = append(out, Located{Offset: start, Event: e})
		e = Event{}
		return len(out) >= n
	}
	pos := end
	for pos > 0 {
		k := min(int64(block), pos)
		pos -= k
		b := buf[:k]
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return pg, fmt.Errorf("read %s: %w", path, err)
		}
		scanned += k
		for {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				if !tooLong {
					if len(carry)+len(b) > MaxReadLineBytes {
						tooLong, carry = true, carry[:0]
					} else {
						carry = append(slices.Clone(b), carry...)
					}
				}
				break
			}
			seg := b[i+1:]
			if len(carry) > 0 {
				seg = append(slices.Clone(seg), carry...)
			}
			if !tooLong && len(seg) > MaxReadLineBytes {
				tooLong = true
			}
			full := emit(seg, pos+int64(i)+1)
			carry, tooLong, b = carry[:0], false, b[:i]
			if full {
				pg.Before = cursor
				goto done
			}
		}
		if scanned >= MaxBackScan {
			pg.Before = cursor
			goto done
		}
	}
	// The first line of the file.
	emit(carry, 0)
	pg.Before = 0
done:
	slices.Reverse(out)
	pg.Events = out
	return pg, nil
}
