package events

import (
	"bytes"
	"fmt"
	"io"
	"os"
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
	end, partial, err := backEnd(f, path, before)
	pg.End = end
	if err != nil || end == 0 || n <= 0 {
		return pg, err
	}
	const block = 64 << 10
	buf := make([]byte, block)
	bs := backScan{pg: &pg, n: n, keep: keep, first: true, partial: partial, cursor: end}
	var (
		carry   []byte // the part of the current line read so far (its tail)
		tooLong bool
		scanned int64
	)
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
			full := bs.emit(seg, pos+int64(i)+1, tooLong)
			carry, tooLong, b = carry[:0], false, b[:i]
			if full {
				return bs.done(bs.cursor), nil
			}
		}
		if scanned >= MaxBackScan {
			return bs.done(bs.cursor), nil
		}
	}
	// The first line of the file.
	bs.emit(carry, 0, tooLong)
	return bs.done(0), nil
}

// backEnd is where a backward read of f ends: before, or the file's size
// when before < 0 or past it. Reading from the file's end, partial says
// whether its last line lacks a newline.
func backEnd(f *os.File, path string, before int64) (end int64, partial bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	end = size
	if before >= 0 && before < size {
		end = before
	}
	if end == 0 || end != size {
		return end, false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return end, false, fmt.Errorf("read %s: %w", path, err)
	}
	return end, last[0] != '\n', nil
}

// backScan collects a page from the lines a backward read finds, newest
// first.
type backScan struct {
	pg      *Page
	n       int
	keep    func(*Event) bool
	out     []Located
	first   bool  // the next segment is the one ending at the read's end
	partial bool  // that segment is a last line without a newline
	cursor  int64 // start of the oldest segment fully examined
	e       Event
}

// emit handles one complete segment starting at start (tooLong: over
// MaxReadLineBytes, its bytes not kept); it reports whether the page is
// full.
func (bs *backScan) emit(seg []byte, start int64, tooLong bool) bool {
	pg := bs.pg
	bs.cursor = start
	if bs.first {
		bs.first = false
		if bs.partial {
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
	if err := DecodeEvent(seg, &bs.e); err != nil {
		pg.Stats.Malformed++
		if pg.Stats.FirstError == "" {
			pg.Stats.FirstError = err.Error()
		}
		return false
	}
	if bs.keep != nil && !bs.keep(&bs.e) {
		return false
	}
	pg.Stats.Events++
	bs.out = append(bs.out, Located{Offset: start, Event: bs.e})
	bs.e = Event{}
	return len(bs.out) >= bs.n
}

// done completes the page: before is where it starts.
func (bs *backScan) done(before int64) Page {
	bs.pg.Before = before
	slices.Reverse(bs.out)
	bs.pg.Events = bs.out
	return *bs.pg
}
