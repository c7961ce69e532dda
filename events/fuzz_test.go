package events

import (
	"bytes"
	"os"
	"testing"
)

// FuzzScan: any byte stream read as a log never panics, every non-blank
// line is counted once as an event or a skip, and each delivered event
// re-encodes to a line that decodes again.
func FuzzScan(f *testing.F) {
	if data, err := os.ReadFile("../testdata/replay/conversation.jsonl"); err == nil {
		f.Add(data)
		lines := bytes.SplitAfter(data, []byte("\n"))
		for i, l := range lines {
			f.Add(l)
			if i+1 < len(lines) && len(l) > 4 {
				// a torn line followed by a whole one, as after a crash
				f.Add(append(append([]byte(nil), l[:len(l)/2]...), lines[i+1]...))
			}
		}
	}
	for _, s := range append(decodeOK, decodeBad...) {
		f.Add([]byte(s + "\n" + s))
	}
	f.Add([]byte("\n\n  \n"))
	f.Add([]byte("{\"schemaVersion\":1}\r\n\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []Event
		st, err := Scan(bytes.NewReader(data), func(e Event) error {
			got = append(got, e)
			return nil
		})
		if err != nil {
			t.Fatalf("Scan of an in-memory reader: %v", err)
		}
		if st.Events != len(got) || st.Lines != st.Events+st.Skipped() {
			t.Fatalf("stats %+v for %d events", st, len(got))
		}
		// FirstSkipped is a line number in the file, blank lines included.
		if physical := bytes.Count(data, []byte("\n")) + 1; st.Skipped() > 0 && (st.FirstSkipped < 1 || st.FirstSkipped > physical) {
			t.Fatalf("FirstSkipped %d of %d lines", st.FirstSkipped, physical)
		}
		for _, e := range got {
			var back Event
			if err := DecodeEvent(AppendJSON(nil, e), &back); err != nil {
				t.Fatalf("a delivered event does not round-trip: %v", err)
			}
		}
	})
}
