package transcript

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

// slowTranscriptLine is ParseLine with encoding/json only.
func slowTranscriptLine(line []byte) ([]events.Activity, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] != '{' {
		if !json.Valid(line) {
			return nil, errNotJSON
		}
		return nil, nil
	}
	return parseTranscriptLineJSON(line)
}

var errNotJSON = os.ErrInvalid

// sameActivities compares two results, an empty list equal to none.
func sameActivities(a, b []events.Activity) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// checkFast holds the single-pass path to the encoding/json one on line:
// when it answers, it answers the same (and only for JSON lines).
func checkFast(t *testing.T, line []byte) (handled bool) {
	t.Helper()
	trimmed := bytes.TrimSpace(line)
	fast, ok := fastTranscriptLine(trimmed)
	slow, err := slowTranscriptLine(line)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fast path answered %d activities for a line encoding/json rejects (%v): %q", len(fast), err, line)
	}
	if !sameActivities(fast, slow) {
		t.Fatalf("fast path differs on %q\nfast: %+v\nslow: %+v", line, fast, slow)
	}
	got, err := ParseLine(line)
	if err != nil || !sameActivities(got, slow) {
		t.Fatalf("ParseLine differs from encoding/json on %q: %v %+v", line, err, got)
	}
	return true
}

// todayFixture: transcripts of today's 2.1.328 sessions, recorded from the
// real CLI by TestRecordTodayTranscripts.
const todayFixture = "testdata/claude-2.1.328-today.jsonl"

// corpusTranscripts lists the recorded fixtures (a chat, and today's
// sessions: see transcript_record_test.go) and every JSONL file of the
// corpus in testdata/corpus (Claude Code transcripts and others: any line is
// a test). A corpus that cannot be walked or is nearly empty fails the test.
func corpusTranscripts(tb testing.TB) []string {
	tb.Helper()
	files := []string{"testdata/claude-2.1.328-chat.jsonl", todayFixture}
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) < 40 {
		tb.Fatalf("corpus %s: %d JSONL files, %v (testdata/corpus is part of the repository)", corpusDir, len(files)-2, err)
	}
	return files
}

// TestFastTranscriptMatchesJSON: on every line of the real transcripts the
// single-pass path gives what the encoding/json path gives, and it handles
// nearly all assistant and user lines itself (it is not a path that always
// gives up).
func TestFastTranscriptMatchesJSON(t *testing.T) {
	var lines, handled, chat, chatHandled int
	for _, f := range corpusTranscripts(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			lines++
			h := checkFast(t, l)
			if h {
				handled++
			}
			var k struct{ Type string }
			if json.Unmarshal(l, &k) == nil && (k.Type == "assistant" || k.Type == "user") {
				chat++
				if h {
					chatHandled++
				}
			}
		}
	}
	t.Logf("%d lines, %d handled by the fast path; assistant/user: %d of %d", lines, handled, chatHandled, chat)
	if chat == 0 || chatHandled*100 < chat*95 {
		t.Fatalf("the fast path handled only %d of %d assistant/user lines", chatHandled, chat)
	}
}

// TestFastTranscriptEdges: shapes where the two paths could part.
func TestFastTranscriptEdges(t *testing.T) {
	long := strings.Repeat("word  \\n\\t", 2000)
	for _, l := range []string{
		`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}}`,
		`{"type":"assistant","type":"user","message":{"content":"x"}}`,
		`{"Type":"assistant","message":{"content":"x"}}`,
		`{"typ\u0065":"assistant","message":{"content":"x"}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":5}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","TEXT":"x"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls","command":7}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"","description":"d\u00e9"}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"x":1e999,"command":"ls"}}]}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":1.5},"content":"x"}}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":99999999999999999999},"content":"x"}}`,
		`{"type":"assistant","message":null}`,
		`{"type":"assistant","message":{"content":null}}`,
		`{"type":"assistant","isSidechain":true,"message":{"content":"x"}}`,
		`{"type":"assistant","isSidechain":"yes","message":{"content":"x"}}`,
		`{"type":"assistant","message":{"content":"x"},"timestamp":"2026-11-30T04:48:55.217Z","sessionId":"s\u00e9"}`,
		"{\"type\":\"assistant\",\"message\":{\"content\":\"\xff\xfe ok\"}}",
		"{\"type\":\"assistant\",\"message\":{\"content\":\"a\x01\"}}",
		`{"type":"assistant","message":{"content":"x"}} x`,
		`{"type":"assistant","message":{"content":"x"},}`,
		`{"type":"user","isMeta":true,"message":{"content":"Stop hook feedback: hello"},"uuid":"u"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"<system-reminder>Stop hook said hi</system-reminder>"}]}}`,
		`{"type":"user","turnOrigin":"task_notification","message":{"content":"<task-notification><event>e</event>"}}`,
		`{"type":"user","isMeta":true,"message":{"content":"context"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + long + `","is_error":true}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + long + `"},{"type":"image"},{"type":"text","text":"b"}]}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat(" ", 5000) + `a b"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("\\ud83d\\ude00 ", 1500) + `"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("é ", 1500) + `"}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":{"a":1}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"a\ud83d b\ud83d\u0041 \udc00\ud83d\ude00 \u00e9\/\"\\\\ \u2028\u0085x\u00a0y"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\ud83d b\ud83d\u0041 \udc00\ud83d\ude00"},{"type":"tool_use","name":"X","input":{"path":"\u000b a \u3000 b"}}]}}`,
		"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"\xe2\x82 x\xff" + strings.Repeat("y ", 150) + "\"}]}}",
		`{"type":"system","subtype":"turn_duration","uuid":"u"}`,
		`{"type":"progress","data":{"type":"assistant","n":[1,2,{"x":null}]}}`,
		`{"type":"progress","data":[1,2}`,
	} {
		checkFast(t, []byte(l))
	}
}

// FuzzFastTranscriptLine: the single-pass path never answers differently
// from the encoding/json one.
func FuzzFastTranscriptLine(f *testing.F) {
	for _, l := range seedLines(f, 200) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"a\u00e9\\n b","is_error":false}]}}`))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls","description":"x"}}],"stop_reason":"end_turn"}}`))
	f.Add([]byte(`{"base":"93663c81","id":"015f2a9b","keep":2,"sessionId":"s1","tail":[],"timestamp":"2026-12-05T01:42:18.940Z","type":"api-request"}`))
	f.Add([]byte(`{"type":"api-request","base":"b","tail":[ ],"TAIL":["x"],"uuid":"u"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}
