package events

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backLog writes a log of n events (every 7th with a long text, a few junk
// lines and an oversized line in between) and returns its path and the
// events' texts in file order with their line offsets.
func backLog(t testing.TB, n int, tail string) (string, []string, []int64) {
	t.Helper()
	var b bytes.Buffer
	var texts []string
	var offs []int64
	for i := range n {
		switch i % 50 {
		case 13:
			b.WriteString("{not json\n\n")
		case 29:
			b.WriteString(`{"x":"` + strings.Repeat("y", MaxReadLineBytes+10) + "\"}\n")
		}
		text := fmt.Sprintf("event %d", i)
		if i%7 == 0 {
			text += " " + strings.Repeat("long ", 30000) // ~150 KB: spans blocks
		}
		e := New("s1", RoleUser, KindMessage, text)
		if i%3 == 0 {
			e.Role = RoleClaude
		}
		line := append(AppendJSON(nil, e), '\n')
		offs = append(offs, int64(b.Len()))
		b.Write(line)
		texts = append(texts, text)
	}
	b.WriteString(tail)
	p := filepath.Join(t.TempDir(), "conversation.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, texts, offs
}

func TestReadBackPagesMatchForwardScan(t *testing.T) {
	for _, tail := range []string{"", `{"id":"evt_torn","ts":`} {
		p, texts, offs := backLog(t, 400, tail)
		var got []string
		before := int64(-1)
		var end int64 = -1
		for pages := 0; ; pages++ {
			pg, err := ReadBack(p, before, 17, nil)
			if err != nil {
				t.Fatal(err)
			}
			if end < 0 {
				end = pg.End
			}
			var page []string
			for _, l := range pg.Events {
				page = append(page, l.Event.Text)
			}
			got = append(page, got...)
			if pg.Before == 0 {
				break
			}
			if pg.Before >= before && before >= 0 {
				t.Fatalf("cursor did not move back: %d then %d", before, pg.Before)
			}
			before = pg.Before
			if pages > 100 {
				t.Fatal("too many pages")
			}
		}
		if len(got) != len(texts) {
			t.Fatalf("tail %q: read back %d events, wrote %d", tail, len(got), len(texts))
		}
		for i := range texts {
			if got[i] != texts[i] {
				t.Fatalf("event %d: got %.40q, want %.40q", i, got[i], texts[i])
			}
		}
		// End is just past the last complete line: a torn tail is left out.
		fi, _ := os.Stat(p)
		if want := fi.Size() - int64(len(tail)); end != want {
			t.Fatalf("tail %q: End = %d, want %d", tail, end, want)
		}
		_ = offs
	}
}

func TestReadBackOffsetsAndFilter(t *testing.T) {
	p, texts, offs := backLog(t, 120, "")
	pg, err := ReadBack(p, -1, 5, func(e *Event) bool { return e.Role == RoleClaude })
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Events) != 5 {
		t.Fatalf("got %d events", len(pg.Events))
	}
	// The newest five claude events: indexes divisible by 3, from the top.
	want := []int{105, 108, 111, 114, 117}
	for i, l := range pg.Events {
		if l.Event.Text != texts[want[i]] || l.Offset != offs[want[i]] {
			t.Fatalf("event %d: %.30q at %d, want %.30q at %d", i, l.Event.Text, l.Offset, texts[want[i]], offs[want[i]])
		}
	}
	if pg.Before != offs[105] {
		t.Fatalf("Before = %d, want the first returned line's offset %d", pg.Before, offs[105])
	}
	// Continue from the cursor: the next page precedes it without overlap.
	pg2, err := ReadBack(p, pg.Before, 2, func(e *Event) bool { return e.Role == RoleClaude })
	if err != nil {
		t.Fatal(err)
	}
	if len(pg2.Events) != 2 || pg2.Events[1].Event.Text != texts[102] || pg2.Events[0].Event.Text != texts[99] {
		t.Fatalf("second page: %+v", pg2.Events)
	}
}

func TestReadBackSkipsDamageAndBounds(t *testing.T) {
	p, _, _ := backLog(t, 100, "")
	pg, err := ReadBack(p, -1, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pg.Stats.Malformed != 2 || pg.Stats.TooLong != 2 || len(pg.Events) != 100 {
		t.Fatalf("stats %+v, %d events", pg.Stats, len(pg.Events))
	}
	// A scan budget smaller than the log: the page stops early with a
	// cursor instead of reading everything.
	old := MaxBackScan
	MaxBackScan = 256 << 10
	defer func() { MaxBackScan = old }()
	pg, err = ReadBack(p, -1, 1000, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Events) != 0 || pg.Before == 0 {
		t.Fatalf("budget: %d events, Before %d (want 0 events and a cursor > 0)", len(pg.Events), pg.Before)
	}
	// Empty and missing logs.
	empty := filepath.Join(t.TempDir(), "e.jsonl")
	os.WriteFile(empty, nil, 0o600)
	if pg, err := ReadBack(empty, -1, 5, nil); err != nil || len(pg.Events) != 0 || pg.End != 0 {
		t.Fatalf("empty: %+v %v", pg, err)
	}
	if _, err := ReadBack(filepath.Join(t.TempDir(), "none"), -1, 5, nil); err == nil {
		t.Fatal("missing log: no error")
	}
}

func TestReadBackRandomCursors(t *testing.T) {
	p, texts, offs := backLog(t, 60, "")
	r := rand.New(rand.NewSource(1))
	for range 50 {
		i := r.Intn(len(offs))
		n := 1 + r.Intn(8)
		pg, err := ReadBack(p, offs[i], n, nil)
		if err != nil {
			t.Fatal(err)
		}
		lo := max(0, i-n)
		if len(pg.Events) != i-lo {
			t.Fatalf("before event %d, n=%d: got %d events", i, n, len(pg.Events))
		}
		for j, l := range pg.Events {
			if l.Event.Text != texts[lo+j] {
				t.Fatalf("before %d: event %d is %.20q, want %.20q", i, j, l.Event.Text, texts[lo+j])
			}
		}
	}
}

// BenchmarkReadBackFirstPage: the newest 200 events of a 1,000,000-event
// log (what the page loads first), against reading the whole log forward.
func BenchmarkReadBackFirstPage(b *testing.B) {
	p := millionLog(b)
	b.Run("ReadBack-200", func(b *testing.B) {
		for b.Loop() {
			pg, err := ReadBack(p, -1, 200, nil)
			if err != nil || len(pg.Events) != 200 {
				b.Fatal(err, len(pg.Events))
			}
		}
	})
	b.Run("ReadFile-all", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if _, err := ReadFile(p, func(Event) error { n++; return nil }); err != nil || n != 1_000_000 {
				b.Fatal(err, n)
			}
		}
	})
}

func millionLog(b *testing.B) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "conversation.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range 1_000_000 {
		e := New("s1", RoleUser, KindMessage, fmt.Sprintf("message number %d with some ordinary words in it", i))
		line := append(AppendJSON(nil, e), '\n')
		buf.Write(line)
		if buf.Len() > 1<<20 {
			f.Write(buf.Bytes())
			buf.Reset()
		}
	}
	f.Write(buf.Bytes())
	f.Close()
	return p
}
