package transcript

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agentmsg"
	"github.com/relay-baton/relay-baton/events"
)

// corpusDir is the transcript corpus copied into the repository
// (testdata/corpus/README.md names each file's source and licence).
const corpusDir = "../testdata/corpus"

// corpusFile returns the path of a corpus file; a missing one fails the test.
func corpusFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(corpusDir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus file missing (testdata/corpus is part of the repository): %v", err)
	}
	return p
}

func parseFile(t *testing.T, p string) (kinds map[events.ActivityKind]int, acts []events.Activity, errs int) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	kinds = map[events.ActivityKind]int{}
	for sc.Scan() {
		a, err := ParseLine(sc.Bytes())
		if err != nil {
			errs++
			continue
		}
		for _, x := range a {
			kinds[x.Kind]++
		}
		acts = append(acts, a...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kinds, acts, errs
}

// Real transcripts of several Claude Code versions parse without errors and
// yield tool lines with the same detail as live output, reply text and ends
// of turn.
func TestTranscriptCorpus(t *testing.T) {
	cases := []struct {
		file     string
		minTools int
		minText  int
		wantDone bool
	}{
		{"marot-spotter/test/fixtures/transcripts/tool_heavy.jsonl", 6, 2, false},                                     // 2.1.38
		{"marot-spotter/test/fixtures/transcripts/short.jsonl", 2, 2, false},                                          // 2.1.38
		{"marot-spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl", 50, 10, true},          // 2.1.39
		{"jnarowski-agentcmd/packages/agent-cli-sdk/tests/fixtures/claude/full/full-session-four.jsonl", 1, 1, false}, // 2.0.27
		{"daaain-claude-code-log/test/test_data/edge_cases.jsonl", 1, 1, true},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			kinds, acts, errs := parseFile(t, corpusFile(t, c.file))
			if errs != 0 {
				t.Errorf("%d lines failed to parse", errs)
			}
			if kinds[events.ActTool] < c.minTools || kinds[events.ActText] < c.minText {
				t.Errorf("kinds = %v, want >= %d tools and >= %d texts", kinds, c.minTools, c.minText)
			}
			if c.wantDone && kinds[events.ActDone] == 0 {
				t.Errorf("no end of turn found: %v", kinds)
			}
			for _, a := range acts {
				if a.Source != Source {
					t.Fatalf("source %q", a.Source)
				}
				if a.Kind == events.ActTool && a.Tool == "" {
					t.Errorf("tool activity without a name: %+v", a)
				}
			}
		})
	}
}

// Subagent files are all sidechain: nothing of them reaches the stream.
func TestTranscriptSidechainIgnored(t *testing.T) {
	dir := corpusFile(t, "marot-spotter/test/fixtures/transcripts/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		t.Fatalf("read %s: %v", dir, err)
	}
	kinds, _, errs := parseFile(t, filepath.Join(dir, ents[0].Name()))
	if len(kinds) != 0 || errs != 0 {
		t.Errorf("sidechain file produced %v (errors %d), want nothing", kinds, errs)
	}
}

func TestParseTranscriptLine(t *testing.T) {
	cases := []struct {
		name   string
		line   string
		want   []events.ActivityKind
		detail string // of the first activity
		text   string // substring of the first activity's text
		err    bool
	}{
		{"tool use detail as live output", `{"type":"assistant","isSidechain":false,"message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 5","description":"Wait five seconds"}}],"stop_reason":"tool_use"}}`,
			[]events.ActivityKind{events.ActThinking, events.ActTool}, "", "", false},
		{"end turn", `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}}`,
			[]events.ActivityKind{events.ActText, events.ActDone}, "", "hi", false},
		{"thinking line of a split message is not the end", `{"type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"thinking","thinking":"hm"}],"stop_reason":"end_turn"}}`,
			[]events.ActivityKind{events.ActThinking}, "", "", false},
		{"sidechain", `{"type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"sub"}],"stop_reason":"end_turn"}}`, nil, "", "", false},
		{"stop hook delivery", `{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n[relay-baton chat message ab12cd34 from x]"}}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredByHook, "ab12cd34", false},
		{"rewake delivery", `{"type":"user","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT] Stop hook blocking error from command \"rb hook wait\": [relay-baton chat message ee00ff11]\n</system-reminder>"}]}}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredByRewake, "ee00ff11", false},
		{"monitor delivery", `{"type":"user","turnOrigin":"task_notification","message":{"role":"user","content":"<task-notification><task-id>x</task-id><event>[relay-baton chat message 0badcafe]</event></task-notification>"}}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredByMonitor, "0badcafe", false},
		{"queued command absorbed", `{"type":"attachment","attachment":{"type":"queued_command","commandMode":"task-notification","prompt":"<event>msg 12345678</event>"}}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredByMonitor, "12345678", false},
		// Shapes recorded from claude 2.1.328 (idle TUI; busy TUI absorbing
		// the message at a tool result), trimmed.
		{"socket delivery while idle", `{"parentUuid":"070db9b7","isSidechain":false,"type":"user","message":{"role":"user","content":"Another Claude session sent a message:\n[relay-baton chat message ef015678 from room] SOCK-IDLE-2 anything?\n\nThis came from another Claude session — not typed by your user, but very likely working on their behalf."},"isMeta":true,"uuid":"63cf9d2e","timestamp":"2026-12-02T04:37:12.328Z","origin":{"kind":"peer","from":"unknown","verifiedPeerPid":1713},"promptSource":"system","turnOrigin":"peer"}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredBySocket, "[relay-baton chat message ef015678 from room] SOCK-IDLE-2 anything?", false},
		{"socket delivery absorbed mid-turn", `{"parentUuid":"16e5f559","isSidechain":false,"attachment":{"type":"queued_command","prompt":"[relay-baton chat message abcd1234 from room] SOCK-BUSY-1 how far?","source_uuid":"b1f94a92","commandMode":"prompt","origin":{"kind":"peer","from":"unknown","verifiedPeerPid":27122},"isMeta":true},"type":"attachment","uuid":"79bd7d50","timestamp":"2026-12-02T04:35:47.136Z"}`,
			[]events.ActivityKind{events.ActDelivered}, DeliveredBySocket, "chat message abcd1234 from room", false},
		{"a prompt the user typed while busy is not a delivery", `{"type":"attachment","attachment":{"type":"queued_command","prompt":"also fix the tests","commandMode":"prompt"}}`, nil, "", "", false},
		{"other system reminder is user context", `{"type":"user","isMeta":true,"message":{"role":"user","content":"<system-reminder>todo list changed</system-reminder>"}}`, nil, "", "", false},
		{"plain user prompt", `{"type":"user","message":{"role":"user","content":"fix the bug"}}`, []events.ActivityKind{events.ActUser}, "", "fix the bug", false},
		{"turn duration", `{"type":"system","subtype":"turn_duration","durationMs":5}`, []events.ActivityKind{events.ActDone}, "", "", false},
		{"blocking stop hook summary", `{"type":"system","subtype":"stop_hook_summary","hookErrors":["x"],"preventedContinuation":false}`, nil, "", "", false},
		{"unknown type", `{"type":"atis-latch","foo":1}`, nil, "", "", false},
		{"future assistant shape", `{"type":"assistant","message":{"content":{"weird":true}}}`, nil, "", "", false},
		{"bare string", `"hello"`, nil, "", "", false},
		{"array", `[1,2]`, nil, "", "", false},
		{"blank", `   `, nil, "", "", false},
		{"torn", `{"type":"assistant","message":{"con`, nil, "", "", true},
		{"garbage", `not json at all`, nil, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acts, err := ParseLine([]byte(c.line))
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			var kinds []events.ActivityKind
			for _, a := range acts {
				kinds = append(kinds, a.Kind)
			}
			if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(c.want), ",") {
				t.Fatalf("kinds = %v, want %v", kinds, c.want)
			}
			if len(acts) > 0 {
				if c.detail != "" && acts[0].Detail != c.detail {
					t.Errorf("detail = %q, want %q", acts[0].Detail, c.detail)
				}
				if c.text != "" && !strings.Contains(acts[0].Text, c.text) {
					t.Errorf("text = %q, want it to contain %q", acts[0].Text, c.text)
				}
			}
			if c.name == "tool use detail as live output" {
				want := agentmsg.ToolDetail("Bash", []byte(`{"command":"sleep 5","description":"Wait five seconds"}`))
				if acts[1].Detail != want || acts[1].Tool != "Bash" {
					t.Errorf("tool = %+v, want detail %q", acts[1], want)
				}
			}
		})
	}
}

func kindStrings(k []events.ActivityKind) []string {
	s := make([]string, len(k))
	for i, x := range k {
		s[i] = string(x)
	}
	return s
}

// A 10 MB line parses (or fails) without a panic.
func TestParseTranscriptHugeLine(t *testing.T) {
	big := `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("x", 10<<20) + `"}],"stop_reason":"end_turn"}}`
	acts, err := ParseLine([]byte(big))
	if err != nil || len(acts) != 2 || len(acts[0].Text) != 10<<20 {
		t.Fatalf("huge line: %d activities, err %v", len(acts), err)
	}
}

func BenchmarkParseTranscriptCorpus(b *testing.B) {
	p := filepath.Join(corpusDir, "marot-spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatalf("corpus file missing (testdata/corpus is part of the repository): %v", err)
	}
	lines := strings.Split(string(data), "\n")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, l := range lines {
			_, _ = ParseLine([]byte(l))
		}
	}
}

// testdata/claude-2.1.328-chat.jsonl is a real transcript recorded here
// with Claude Code 2.1.328 against a mock API, hooks installed by
// `relay-baton hook install` (lines carrying Claude Code's own system
// prompt and tool listings removed): a prompt, a chat message delivered
// by the Stop hook while the turn ran, one delivered by the asyncRewake
// waiter while idle.
func TestTranscriptClaude2328Chat(t *testing.T) {
	_, acts, errs := parseFile(t, "testdata/claude-2.1.328-chat.jsonl")
	if errs != 0 {
		t.Fatalf("%d lines failed", errs)
	}
	var seq []string
	for _, a := range acts {
		s := string(a.Kind)
		switch a.Kind {
		case events.ActDelivered:
			s += "(" + a.Detail + ")"
		case events.ActText, events.ActUser:
			s += "(" + a.Text + ")"
		}
		seq = append(seq, s)
	}
	// end_turn and the Stop hook summary both mark the end of a turn (not
	// the summary of the Stop that blocked with the chat message);
	// consumers collapse the pair.
	want := "user(please be slow),text(ack 1),done,delivered(hook),text(ack 2),done,done,delivered(rewake),text(ack 3),done,done"
	if got := strings.Join(seq, ","); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, a := range acts {
		if a.Kind == events.ActDelivered && !strings.Contains(a.Text, "[relay-baton chat message ") {
			t.Errorf("delivered text lost the framing: %q", a.Text)
		}
		if a.Time.IsZero() || a.Session == "" {
			t.Errorf("activity without time or session: %+v", a)
		}
	}
}

// A model request Claude Code retries (the API answering 500 or 401)
// shows in the transcript only as api-request lines: each retry names the
// one before as its base and adds nothing (an empty tail). A retry is an
// error activity saying so; the first request and a request after a tool
// call (a tail of new messages) are not. Lines as claude 2.1.332 wrote
// them against a mock API answering 500, params and shape cut.
func TestRetriedModelRequestShows(t *testing.T) {
	lines := []struct {
		line  string
		retry bool
	}{
		{`{"type":"api-request","sessionId":"s1","id":"93663c81","timestamp":"2026-12-05T01:42:18.392Z","version":"2.1.332","querySource":"repl_main_thread","keep":0,"tail":["c796e8eb","4ccefc6b"],"params":{"model":"claude-opus-5-5"}}`, false},
		{`{"base":"93663c81","id":"015f2a9b","keep":2,"querySource":"repl_main_thread","requestDigest":"3cba6743","sessionId":"s1","tail":[],"thread":{"type":"none"},"timestamp":"2026-12-05T01:42:18.940Z","type":"api-request","version":"2.1.332"}`, true},
		{`{"base":"015f2a9b","id":"1bd69520","keep":2,"sessionId":"s1","tail":["aa11","bb22"],"timestamp":"2026-12-05T01:42:20.035Z","type":"api-request","version":"2.1.332"}`, false},
		{`{"type":"api-request","base":"x","sessionId":"s1"}`, false}, // no tail: not known to be a retry
	}
	for i, l := range lines {
		acts, err := ParseLine([]byte(l.line))
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		got := len(acts) == 1 && acts[0].Kind == events.ActError && acts[0].Detail == RetryDetail && acts[0].Text == RetryText && acts[0].Session == "s1"
		if got != l.retry || (!l.retry && len(acts) != 0) {
			t.Fatalf("line %d: %+v, want retry=%v", i, acts, l.retry)
		}
	}
}
