package agents_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// corpus returns the path of a file of the transcript corpus copied into the
// repository (testdata/corpus); a missing one fails the test.
func corpus(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join("..", "testdata", "corpus", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus file missing (testdata/corpus is part of the repository): %v", err)
	}
	return p
}

func parseFile(t testing.TB, p agents.Parser, path string) []events.Activity {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []events.Activity
	for sc.Scan() {
		out = append(out, p.Line(sc.Bytes())...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func kinds(acts []events.Activity) string {
	var k []string
	for _, a := range acts {
		k = append(k, string(a.Kind))
	}
	return strings.Join(k, ",")
}

func TestClaudeParserCorpus(t *testing.T) {
	p := agents.NewClaudeParser()
	acts := parseFile(t, p, corpus(t, "charlieyou-claude-agent-sdk-gleam/test/fixtures/golden/basic_query.ndjson"))
	if got := kinds(acts); got != "text,usage,done" {
		t.Fatalf("kinds %s", got)
	}
	o := p.Outcome()
	if o.Session != "1d1e46f9-35c7-4834-b529-846d5bb82288" || o.FinalText != "4" || o.Usage.CostUSD != 0.1354875 ||
		o.Usage.InputTokens != 21580 || o.Usage.OutputTokens != 25 || !o.Done || o.IsError {
		t.Fatalf("outcome %+v", o)
	}
	if acts[0].Text != "4" || acts[0].Session != o.Session || acts[2].StopReason != "success" {
		t.Fatalf("acts %+v", acts)
	}
}

func TestClaudeParserLines(t *testing.T) {
	p := agents.NewClaudeParser()
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s1","cwd":"/x"}`,
		`{"type":"system","subtype":"thinking_tokens","estimated_tokens":3}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la","description":"List files"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a\nb","is_error":false}]}}`,
		`{"type":"brand_new_type","x":1}`,
		`not json at all`,
		``,
		`"a string"`,
		`{"type":"assistant","message":"garbage"}`,
		`{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 500 boom\nmore","api_error_status":500,"total_cost_usd":0.5}`,
	}
	var acts []events.Activity
	for _, l := range lines {
		acts = append(acts, p.Line([]byte(l))...)
	}
	if got := kinds(acts); got != "thinking,tool,tool_result,raw,raw,usage,error,done" {
		t.Fatalf("kinds %s", got)
	}
	if acts[1].Tool != "Bash" || acts[1].Detail != "List files" || acts[1].Session != "s1" {
		t.Errorf("tool %+v", acts[1])
	}
	if acts[2].Text != "a b" || acts[2].ID != "t1" {
		t.Errorf("tool result %+v", acts[2])
	}
	if acts[3].Text != "not json at all" {
		t.Errorf("raw %+v", acts[3])
	}
	o := p.Outcome()
	if !o.IsError || o.ErrorText != "API Error: 500 boom" || !acts[7].IsError || o.Usage.CostUSD != 0.5 {
		t.Errorf("outcome %+v", o)
	}
}

func TestCodexParserCorpus(t *testing.T) {
	for _, n := range []string{"1", "2", "3", "4", "5", "multi-1"} {
		t.Run(n, func(t *testing.T) {
			p := agents.NewCodexParser()
			acts := parseFile(t, p, corpus(t, "jnarowski-agentcmd/.agent/research/codex/codex-samples/stream-output-"+n+".jsonl"))
			o := p.Outcome()
			if o.Session == "" {
				t.Fatal("no thread id")
			}
			if n == "multi-1" { // cut short after turn.started
				if len(acts) != 0 || o.Done {
					t.Fatalf("acts %+v outcome %+v", acts, o)
				}
				return
			}
			if !o.Done || !o.HasUsage || o.Usage.InputTokens == 0 || o.FinalText == "" {
				t.Fatalf("outcome %+v", o)
			}
			if acts[len(acts)-1].Kind != events.ActDone {
				t.Fatalf("last %+v", acts[len(acts)-1])
			}
			for _, a := range acts {
				if a.Kind == events.ActRaw {
					t.Errorf("raw activity from a JSON line: %+v", a)
				}
			}
		})
	}
	p := agents.NewCodexParser()
	acts := parseFile(t, p, corpus(t, "jnarowski-agentcmd/.agent/research/codex/codex-samples/stream-output-4.jsonl"))
	if got := kinds(acts); got != "thinking,tool,tool_result,thinking,text,usage,done" {
		t.Fatalf("kinds %s", got)
	}
	if acts[1].Detail != "cat test.js" || acts[2].ExitCode == nil || *acts[2].ExitCode != 0 || acts[2].ID != acts[1].ID {
		t.Fatalf("command %+v result %+v", acts[1], acts[2])
	}
	if u := p.Outcome().Usage; u.InputTokens != 6087 || u.CachedInputTokens != 5120 || u.OutputTokens != 204 {
		t.Fatalf("usage %+v", u)
	}
}

func TestCodexParserLines(t *testing.T) {
	p := agents.NewCodexParser()
	lines := []string{
		`{"type":"thread.started","thread_id":"th1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"i0","type":"command_execution","command":"/bin/bash -lc 'echo '\"'\"'hi'\"'\"' > x'","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i0","type":"command_execution","command":"/bin/bash -lc 'false'","exit_code":1,"aggregated_output":"oops\n","status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"file_change","changes":[{"path":"a.go","kind":"update"},{"path":"b.go","kind":"add"}],"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"i2","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"query":"pflag"},"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i2","type":"mcp_tool_call","server":"docs","tool":"search","status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"i3","type":"web_search","query":"go exec WaitDelay"}}`,
		`{"type":"item.started","item":{"id":"i4","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}`,
		`{"type":"item.updated","item":{"id":"i4","type":"todo_list","items":[]}}`,
		`{"type":"item.completed","item":{"id":"i5","type":"error","message":"command timed out"}}`,
		`{"type":"item.completed","item":{"id":"i6","type":"plan","text":"future item"}}`,
		`{"type":"error","message":"stream disconnected"}`,
		`{"type":"turn.failed","error":{"message":"unexpected status 500: boom"}}`,
		`Reading additional input from stdin...`,
	}
	var acts []events.Activity
	for _, l := range lines {
		acts = append(acts, p.Line([]byte(l))...)
	}
	want := "tool,tool_result,tool,tool_result,tool,tool_result,tool,tool_result,tool,error,error,error,done,raw"
	if got := kinds(acts); got != want {
		t.Fatalf("kinds\n got %s\nwant %s", got, want)
	}
	if acts[0].Detail != `echo 'hi' > x` || acts[0].Tool != "command_execution" || acts[0].Session != "th1" {
		t.Errorf("command %+v", acts[0])
	}
	if !acts[1].IsError || *acts[1].ExitCode != 1 || acts[1].Text != "oops" {
		t.Errorf("failed command %+v", acts[1])
	}
	if acts[2].Detail != "update a.go, add b.go" || acts[4].Tool != "docs.search" || acts[4].Detail != "pflag" {
		t.Errorf("file change %+v / mcp %+v", acts[2], acts[4])
	}
	if acts[6].Detail != "go exec WaitDelay" || acts[8].Detail != "1/2 done" {
		t.Errorf("web search %+v todo %+v", acts[6], acts[8])
	}
	o := p.Outcome()
	if !o.IsError || o.ErrorText != "unexpected status 500: boom" || !o.Done {
		t.Errorf("outcome %+v", o)
	}
}

// The parsers must never panic, whatever the line.
func TestParsersSurviveGarbage(t *testing.T) {
	garbage := []string{
		`{`, `}`, `{"type":1}`, `{"type":"assistant","message":{"content":[1,2,3]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":"str"}]}}`,
		`{"type":"result","usage":"x"}`, `{"type":"item.completed","item":null}`, `{"type":"item.completed","item":{"type":"command_execution","exit_code":"x"}}`,
		`{"type":"turn.completed","usage":[]}`, "\xff\xfe\x00", `[1,2]`, `null`, strings.Repeat("{", 100000),
	}
	for _, p := range []agents.Parser{agents.NewClaudeParser(), agents.NewCodexParser()} {
		for _, g := range garbage {
			for _, a := range p.Line([]byte(g)) {
				if a.Kind == events.ActRaw && !utf8.ValidString(a.Text) {
					t.Errorf("raw text %q for %q is not UTF-8", a.Text, g)
				}
			}
		}
	}
}

func FuzzClaudeParser(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"type":"result","result":"x","usage":{"input_tokens":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) { agents.NewClaudeParser().Line(b) })
}

func FuzzCodexParser(f *testing.F) {
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"command_execution","exit_code":0}}`))
	f.Add([]byte(`{"type":"turn.completed","usage":{"input_tokens":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) { agents.NewCodexParser().Line(b) })
}

func BenchmarkClaudeParser(b *testing.B) {
	line := []byte(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./...","description":"Run the tests"}}]},"session_id":"s"}`)
	p := agents.NewClaudeParser()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		p.Line(line)
	}
}

// codex's retry notices, one every few seconds while its API cannot be
// reached: the first becomes one activity that says what it means, the
// rest nothing; an ordinary error still passes.
func TestCodexReconnectingOnce(t *testing.T) {
	p := agents.NewParser(agents.Codex)
	var acts []events.Activity
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"01a2352a-3e45-7303-bb26-85c04544754b"}`,
		`{"type":"turn.started"}`,
		`{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`,
		`{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`,
		`{"type":"error","message":"Reconnecting... 2/5"}`,
		`{"type":"error","message":"stream disconnected"}`,
	} {
		acts = append(acts, p.Line([]byte(l))...)
	}
	var errs []string
	for _, a := range acts {
		if a.Kind == events.ActError {
			errs = append(errs, a.Text)
		}
	}
	if len(errs) != 2 || !strings.HasPrefix(errs[0], "codex cannot reach its API (Reconnecting... waiting for network (Connection failed") ||
		!strings.Contains(errs[0], "Ctrl-C to cancel") || errs[1] != "stream disconnected" {
		t.Fatalf("errors %q", errs)
	}
	if o := p.Outcome(); !strings.HasPrefix(o.Unreachable, "Reconnecting... waiting for network") {
		t.Fatalf("outcome %+v", o)
	}
}
