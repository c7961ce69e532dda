package transcript

import (
	"bytes"
	"testing"
)

// FuzzSkipLine: the tail's pre-filter only passes over lines the parser
// would yield nothing for; it never hides an activity.
func FuzzSkipLine(f *testing.F) {
	for _, l := range scanLines(f) {
		if len(l) <= 4096 {
			f.Add(l)
		}
	}
	for _, s := range []string{
		`{"isSidechain":true,"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}`,
		`{"type":"progress","data":{"type":"assistant"}}`,
		`{"base":"93663c81","keep":2,"sessionId":"s1","tail":[],"type":"api-request"}`,
		`{"base":"93663c81","tail":["a"],"type":"api-request"}`,
		`{"base":"","tail":[ ],"type":"api-request"}`,
		`{"type":"assis\u0074ant","message":{"content":[{"type":"text","text":"x"}]}}`,
		`{"data":{"type":"progress"},"type":"user","message":{"content":"hi"}}`,
		`{"a":"\\\"","type":"x"}`,
		`{"type":"progress"`,
	} {
		f.Add([]byte(s))
	}
	for _, c := range skipLineCases {
		f.Add([]byte(c.line))
	}
	// Today's large lines, cut short: the fuzzer mutates their shape
	// (attachment before type, long nested values) without the bulk.
	for _, l := range todayLines(f) {
		if len(l) > 4096 {
			f.Add(append(append([]byte(nil), l[:2000]...), l[len(l)-1500:]...))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !skipLine(line) {
			return
		}
		acts, _ := ParseLine(line)
		if len(acts) > 0 {
			t.Fatalf("skipLine hid %d activities of %q", len(acts), line)
		}
	})
}

// skipLineCases: shapes where a pre-filter could part from the parser,
// and whether skipLine passes over them.
var skipLineCases = []struct {
	line string
	skip bool
}{
	{`{"type":"progress","data":{"type":"assistant","x":["]","}",{"a":"\"}"}]},"uuid":"u"}`, true},
	{`{"parentUuid":"p","isSidechain":false,"attachment":{"type":"skill_listing","content":"a \"quoted\" [x] {y}","n":[1,{"z":null}]},"type":"attachment","uuid":"u"}`, true},
	{`{"isSidechain":false,"attachment":{"type":"queued_command","commandMode":"task-notification","prompt":"<event>x</event>"},"type":"attachment","uuid":"u"}`, false},
	{`{"attachment":{"type":"queued_command","commandMode":"prompt","prompt":"hi"},"type":"attachment"}`, false}, // a socket message absorbed mid-turn: the parser reads it
	{`{"attachment":{"type":"queued_command","prompt":"hi"},"type":"attachment"}`, false},
	{`{"type":"attachment","attachment":{"type":"date"}}`, true},
	{`{"type":"attachment"}`, false},
	{`{"attachment":{"type":"date"},"attachment":{"type":"queued_command","commandMode":"task-notification"},"type":"attachment"}`, false},
	{`{"attachment":{"type":"date","Type":"queued_command"},"type":"attachment"}`, false},
	{`{"attachment":{"typ\u0065":"queued_command","commandMode":"task-notification"},"type":"attachment"}`, false},
	{`{"attachment":{"type":"queued_command","commandMode":"task-notification"},"type":"attachment","attachment":null}`, false},
	{`{"type":"api-request-shape","shape":{"system":[{"type":"text","text":"You are"}]},"type":"assistant","message":{"content":"x"}}`, false},
	{`{"type":"progress","TYPE":"assistant","message":{"content":"x"}}`, false},
	{`{"type":"progress","typ\u0065":"assistant","message":{"content":"x"}}`, false},
	{`{"type":"progress","data":{}}  `, true},
	{`{"type":"progress","data":{}} x`, false},
	{`{"type":"progress","data":{"a":"b"}`, false},
	{`{"isSidechain":true,"type":"assistant","message":{"content":"x"}}`, true},
	{`{"isSidechain":true,"type":"assistant","isSidechain":false,"message":{"content":"x"}}`, false},
	{`{"isSidechain":true,"type":"assistant","IsSidechain":false,"message":{"content":"x"}}`, false},
	{`{"type":"assistant","isSidechain":true,"message":{"content":"x"}}`, false}, // decided at the type: the parser reads it
	{`{"type":"user","message":{"content":"x"}}`, false},
	{`{"type":"system","subtype":"turn_duration"}`, false},
	{`{"type":"assis\u0074ant","message":{"content":"x"}}`, false},
	{`{"type":5}`, false},
	// A message before the type: the parser decides (assistant lines),
	// unless the line is already known to be a sidechain's.
	{`{"parentUuid":"p","message":{"content":[{"type":"text","text":"x"}]},"type":"assistant"}`, false},
	{`{"message":{"content":"x"},"type":"progress"}`, false},
	{`{"isSidechain":true,"message":{"content":[{"type":"text","text":"x"}]},"type":"assistant"}`, true},
	{`{"type":"progress","message":{"content":"x"}}`, true},
	// Keys the parser may read otherwise (escaped, non-ASCII), long and short.
	{`{"type":"progress","longer_key_\u0074ype":"x"}`, false},
	{`{"type":"progress","a_long_ascii_key_né":"x"}`, false},
	{`{"type":"progress","né":"x"}`, false},
	{`{"type":"progress","a_long_plain_ascii_key":"x"}`, true},
}

func TestSkipLineCases(t *testing.T) {
	for _, c := range skipLineCases {
		got := skipLine([]byte(c.line))
		if got != c.skip {
			t.Errorf("skipLine(%s) = %v, want %v", c.line, got, c.skip)
		}
		if acts, _ := ParseLine([]byte(c.line)); got && len(acts) > 0 {
			t.Errorf("skipLine hid %d activities of %s", len(acts), c.line)
		}
	}
}

// Today's 2.1.328 lines: the attachment and api-request-* lines, most of
// the bytes, are passed over unparsed.
func TestSkipLineToday(t *testing.T) {
	var all, skipped int
	for _, l := range todayLines(t) {
		all += len(l)
		if skipLine(l) {
			skipped += len(l)
			if acts, _ := ParseLine(l); len(acts) > 0 {
				t.Errorf("skipLine hid %d activities of %.200s", len(acts), l)
			}
		}
	}
	if skipped*100 < all*85 {
		t.Fatalf("skipLine passed over %d of %d bytes", skipped, all)
	}
	t.Logf("%d of %d bytes skipped unparsed", skipped, all)
}

// Every line of the real transcripts: the pre-filter and the parser agree.
func TestSkipLineAgreesOnRealLines(t *testing.T) {
	skipped := 0
	lines := scanLines(t)
	for _, l := range lines {
		if !skipLine(l) {
			continue
		}
		skipped++
		if acts, _ := ParseLine(l); len(acts) > 0 {
			t.Errorf("skipLine hid %d activities of %.200s", len(acts), l)
		}
	}
	if skipped == 0 || bytes.Count(bytes.Join(lines, nil), []byte(`"type":"progress"`)) > 0 && skipped < 100 {
		t.Errorf("skipLine passed over only %d of %d lines", skipped, len(lines))
	}
	t.Logf("%d of %d lines skipped unparsed", skipped, len(lines))
}
