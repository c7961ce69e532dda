package events

import (
	"fmt"
	"io"
	"runtime"
)

// Reading a file is split three ways: one goroutine reads lines into
// batches, a few decode batches in parallel (decoding is most of the cost),
// and the caller's goroutine delivers the events in file order. Memory stays
// bounded: at most a few batches are in flight.

const (
	batchBytes = 256 << 10 // bytes of lines per batch
	batchLines = 2048      // lines per batch
)

type lineRef struct {
	start, end int // in batch.data
	no         int // physical line number
	tooLong    bool
}

type batch struct {
	data  []byte
	lines []lineRef
	evs   []Event
	st    Stats
	done  chan struct{}
}

func (b *batch) decode() {
	b.evs = b.evs[:0]
	var e Event
	for _, l := range b.lines {
		handle(&b.st, l.no, b.data[l.start:l.end], l.tooLong, &e, func(e Event) error {
			b.evs = append(b.evs, e)
			return nil
		})
	}
	close(b.done)
}

// readParallel reads lines from r (positioned at offset) and calls fn for
// each event in order. See ReadFileFrom.
func readParallel(r io.Reader, path string, offset int64, completeOnly bool, fn func(Event) error) (Stats, int64, error) {
	workers := min(runtime.GOMAXPROCS(0), 4)
	work := make(chan *batch, workers)
	order := make(chan *batch, 2*workers+1)
	stop := make(chan struct{})
	free := make(chan *batch, 3*workers+3) // delivered batches, for reuse
	var readErr error
	end := offset

	for range workers {
		go func() {
			for b := range work {
				b.decode()
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(work)
		lr := newLineReader(r)
		var b *batch
		send := func() bool {
			if b == nil || len(b.lines) == 0 {
				return true
			}
			select {
			case work <- b:
			case <-stop:
				return false
			}
			select {
			case order <- b:
			case <-stop:
				return false
			}
			b = nil
			return true
		}
		for {
			line, n, terminated, tooLong, err := lr.Next()
			if n > 0 && (terminated || !completeOnly) {
				end += int64(n)
				if b == nil {
					select {
					case b = <-free:
						b.data, b.lines, b.st = b.data[:0], b.lines[:0], Stats{}
						b.done = make(chan struct{})
					default:
						b = &batch{data: make([]byte, 0, batchBytes+4096), lines: make([]lineRef, 0, batchLines), evs: make([]Event, 0, batchLines)}
						b.done = make(chan struct{})
					}
				}
				start := len(b.data)
				b.data = append(b.data, line...)
				b.lines = append(b.lines, lineRef{start: start, end: len(b.data), no: lr.line, tooLong: tooLong})
				if len(b.data) >= batchBytes || len(b.lines) >= batchLines {
					if !send() {
						return
					}
				}
			}
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				send()
				return
			}
		}
	}()

	var st Stats
	for b := range order {
		<-b.done
		mergeBatch(&st, b.st)
		for _, e := range b.evs {
			if err := fn(e); err != nil {
				close(stop)
				for range order { // let the reader finish
				}
				return st, end, err
			}
		}
		clear(b.evs) // drop references to the delivered events
		select {
		case free <- b:
		default:
		}
	}
	if readErr != nil {
		return st, end, fmt.Errorf("read %s: %w", path, readErr)
	}
	return st, end, nil
}

func mergeBatch(total *Stats, st Stats) {
	total.Lines += st.Lines
	total.Events += st.Events
	total.Malformed += st.Malformed
	total.TooLong += st.TooLong
	if total.FirstSkipped == 0 {
		total.FirstSkipped = st.FirstSkipped
		total.FirstError = st.FirstError
	} else if total.FirstError == "" {
		total.FirstError = st.FirstError
	}
}
