package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

func TestParseRolloutLine(t *testing.T) {
	type want struct {
		kind   events.ActivityKind
		tool   string
		detail string
		text   string
		exit   int // -1: none
	}
	cases := []struct {
		name string
		line string
		want []want
	}{
		{"exec_command call", `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}","call_id":"c1"}}`,
			[]want{{events.ActTool, "command_execution", "go test ./...", "", -1}}},
		{"old shell call (argv)", `{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la\"]}","call_id":"c1"}}`,
			[]want{{events.ActTool, "command_execution", "ls -la", "", -1}}},
		{"exec output with exit code", `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nFAIL x\nmore\n"}}`,
			[]want{{events.ActToolResult, "", "", "FAIL x", 2}}},
		{"json output (old shell)", `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"hello\\n\",\"metadata\":{\"exit_code\":0}}"}}`,
			[]want{{events.ActToolResult, "", "", "hello", 0}}},
		{"apply_patch", `{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c2","input":"*** Begin Patch\n*** Update File: a.go\n@@\n*** Add File: b.go\n*** End Patch"}}`,
			[]want{{events.ActTool, "apply_patch", "a.go, b.go", "", -1}}},
		{"reasoning summary", `{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Planning**"}],"encrypted_content":"x"}}`,
			[]want{{events.ActThinking, "", "", "**Planning**", -1}}},
		{"assistant text", `{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All green."}]}}`,
			[]want{{events.ActText, "", "", "All green.", -1}}},
		{"user text", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the bug"}]}}`,
			[]want{{events.ActUser, "", "", "fix the bug", -1}}},
		{"injected context", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/x</cwd>\n</environment_context>"}]}}`, nil},
		{"developer message", `{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}`, nil},
		{"hook delivery", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:2:/h/hooks.json\">[relay-baton chat message ab12cd34 from x] a &amp; b</hook_prompt>"}]}}`,
			[]want{{events.ActDelivered, "", DeliveredByHook, "[relay-baton chat message ab12cd34 from x] a & b", -1}}},
		{"queue delivery", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"[relay-baton chat message 0badcafe from room, typed]\nhi"}]}}`,
			[]want{{events.ActDelivered, "", DeliveredByQueue, "[relay-baton chat message 0badcafe from room, typed]\nhi", -1}}},
		{"task_complete", `{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"x"}}`,
			[]want{{events.ActDone, "", "", "", -1}}},
		{"turn_aborted", `{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`,
			[]want{{events.ActDone, "", "", "", -1}}},
		{"event_msg duplicates skipped", `{"type":"event_msg","payload":{"type":"agent_message","message":"All green."}}`, nil},
		{"unknown line type", `{"type":"future_synthetic_record","payload":{"anything":1}}`, nil},
		{"payload not an object", `{"type":"response_item","payload":[1,2]}`, nil},
		{"no payload", `{"type":"message","role":"user","content":"x"}`, nil},
		{"JSON but not an object", `"just a string"`, nil},
		{"payload type of another kind", `{"type":"response_item","payload":{"type":5}}`, nil},
		{"blank", `   `, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acts, err := ParseRolloutLine([]byte(c.line))
			if err != nil {
				t.Fatal(err)
			}
			if len(acts) != len(c.want) {
				t.Fatalf("got %d activities %+v, want %d", len(acts), acts, len(c.want))
			}
			for i, w := range c.want {
				a := acts[i]
				if a.Kind != w.kind || a.Tool != w.tool || a.Text != w.text || a.Source != Source {
					t.Errorf("activity %d = %+v, want %+v", i, a, w)
				}
				if w.kind == events.ActDelivered {
					if a.Detail != w.detail {
						t.Errorf("lane %q, want %q", a.Detail, w.detail)
					}
				} else if a.Detail != w.detail {
					t.Errorf("detail %q, want %q", a.Detail, w.detail)
				}
				switch {
				case w.exit < 0 && a.ExitCode != nil:
					t.Errorf("exit code %d, want none", *a.ExitCode)
				case w.exit >= 0 && (a.ExitCode == nil || *a.ExitCode != w.exit):
					t.Errorf("exit code %v, want %d", a.ExitCode, w.exit)
				}
			}
		})
	}
	if _, err := ParseRolloutLine([]byte(`{"type":"response_item", broken`)); err == nil {
		t.Error("a line that is not JSON must be an error")
	}
	acts, _ := ParseRolloutLine([]byte(`{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`))
	if acts[0].StopReason != "aborted: interrupted" {
		t.Errorf("stop reason %q", acts[0].StopReason)
	}
}

// rolloutActivities parses a fixture file; errs counts non-JSON lines.
func rolloutActivities(t *testing.T, name string) (acts []events.Activity, errs int) {
	t.Helper()
	if !strings.Contains(name, "/") {
		name = filepath.Join("testdata", "codex", name)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		a, err := ParseRolloutLine(sc.Bytes())
		if err != nil {
			errs++
			continue
		}
		for _, x := range a {
			if x.Kind != events.ActUsage {
				acts = append(acts, x)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return acts, errs
}

func kinds(acts []events.Activity) string {
	var b []string
	for _, a := range acts {
		b = append(b, string(a.Kind))
	}
	return strings.Join(b, ",")
}

// The rollouts recorded here with the real codex 0.169.0 against the mock.
func TestRolloutRecorded0169(t *testing.T) {
	acts, errs := rolloutActivities(t, "rollout-0.169.0-exec-hook-delivery.jsonl")
	if errs != 0 {
		t.Fatalf("%d unparseable lines", errs)
	}
	if got, want := kinds(acts), "user,tool,tool_result,text,delivered,thinking,text,done"; got != want {
		t.Fatalf("activities %s, want %s", got, want)
	}
	if acts[1].Detail != "sleep 6; echo slept" || acts[2].ExitCode == nil || *acts[2].ExitCode != 0 {
		t.Errorf("tool %+v / result %+v", acts[1], acts[2])
	}
	d := acts[4]
	if d.Detail != DeliveredByHook || !strings.HasPrefix(d.Text, "[relay-baton chat message 70bfecd2 ") || !strings.Contains(d.Text, "BUSY-QUESTION: are you there?") || strings.Contains(d.Text, "hook_prompt") {
		t.Errorf("delivery %+v", d)
	}
	if acts[6].Text != "BUSY-ANSWER: yes, here." || acts[5].Text != "considering" {
		t.Errorf("reply %+v %+v", acts[5], acts[6])
	}

	acts, errs = rolloutActivities(t, "rollout-0.169.0-tui-queue-delivery.jsonl")
	if errs != 0 {
		t.Fatalf("%d unparseable lines", errs)
	}
	if got, want := kinds(acts), "user,text,done,delivered,text,done"; got != want {
		t.Fatalf("activities %s, want %s", got, want)
	}
	if acts[3].Detail != DeliveredByQueue || !strings.Contains(acts[3].Text, "452048be") || acts[4].Text != "IDLE-ANSWER: hello from the TUI." {
		t.Errorf("queue delivery %+v, reply %+v", acts[3], acts[4])
	}
}

// Real rollouts of older releases, and the synthetic ones of
// claude-code-log: nothing fatal, the shapes they have are read.
func TestRolloutCorpus(t *testing.T) {
	const corpus = "../testdata/corpus/"
	const daaain = corpus + "daaain-claude-code-log/test/test_data/codex/"
	// Every rollout of the corpus parses; only the malformed one has a
	// line that is not JSON.
	all, _ := filepath.Glob(corpus + "*/*")
	var files []string
	for _, root := range all {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && IsRolloutPath(p) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 10 {
		t.Fatalf("%d rollouts in %s, want the corpus's 10", len(files), corpus)
	}
	for _, p := range files {
		acts, errs := rolloutActivities(t, p)
		if want := map[bool]int{true: 1, false: 0}[strings.Contains(p, "/malformed/")]; errs != want {
			t.Errorf("%s: %d unparseable lines, want %d", p, errs, want)
		}
		t.Logf("%s: %d activities", filepath.Base(p), len(acts))
	}
	t.Run("codemie 0.125.0", func(t *testing.T) {
		acts, errs := rolloutActivities(t, corpus+"codemie-ai-codemie-code/src/agents/plugins/codex/__tests__/fixtures/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
		n := map[events.ActivityKind]int{}
		for _, a := range acts {
			n[a.Kind]++
		}
		// 99 function calls, 3 custom tool calls, 3 web searches; their outputs.
		if errs != 0 || n[events.ActDone] != 2 || n[events.ActUser] != 2 || n[events.ActTool] != 105 || n[events.ActToolResult] != 102 || n[events.ActText] == 0 {
			t.Errorf("errors %d, counts %v", errs, n)
		}
		var patch bool
		for _, a := range acts {
			if a.Tool == "apply_patch" && strings.Contains(a.Detail, "codemie-code-reasoning.test.ts") {
				patch = true
			}
		}
		if !patch {
			t.Error("no apply_patch activity naming its file")
		}
	})
	t.Run("agentcmd 0.40.0", func(t *testing.T) {
		acts, errs := rolloutActivities(t, corpus+"jnarowski-agentcmd/packages/agent-cli-sdk/tests/fixtures/codex/full/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl")
		n := map[events.ActivityKind]int{}
		for _, a := range acts {
			n[a.Kind]++
		}
		if errs != 0 || n[events.ActTool] != 16 || n[events.ActToolResult] != 16 || n[events.ActThinking] != 17 || n[events.ActUser] != 2 {
			t.Errorf("errors %d, counts %v", errs, n)
		}
	})
	t.Run("synthetic", func(t *testing.T) {
		acts, errs := rolloutActivities(t, daaain+"sessions/2026/01/02/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl")
		if errs != 0 || kinds(acts) != "user,thinking,tool,tool_result,tool,tool_result,tool,tool_result,text" {
			t.Errorf("errors %d, activities %s", errs, kinds(acts))
		}
		// The malformed file: its broken line is an error, the rest is read.
		if _, errs := rolloutActivities(t, daaain+"malformed/rollout-66666666-6666-4666-8666-666666666666.jsonl"); errs != 1 {
			t.Errorf("malformed: %d errors, want 1", errs)
		}
	})
}

func TestRolloutMetaAndTurnState(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "codex", "rollout-0.169.0-exec-hook-delivery.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	m, ok := ParseRolloutMeta([]byte(first))
	if !ok || m.ThreadID != "01a2333a-f018-71f2-a399-eccb85793c31" || m.Cwd == "" || m.Originator != "codex_exec" || m.Source != "exec" || m.CLIVersion != "0.169.0" || m.Started.IsZero() {
		t.Fatalf("meta %+v %v", m, ok)
	}
	if _, ok := ParseRolloutMeta([]byte(`{"type":"event_msg","payload":{}}`)); ok {
		t.Error("an event line is not a session_meta")
	}
	if in, known := RolloutTurnState(b); in || !known {
		t.Errorf("a finished rollout: in turn %v, known %v", in, known)
	}
	// Cut after the turn's task_started: in a turn.
	i := strings.Index(string(b), `"type":"task_started"`)
	j := strings.IndexByte(string(b[i:]), '\n')
	if in, known := RolloutTurnState(b[:i+j+1]); !in || !known {
		t.Errorf("mid-turn rollout: in turn %v, known %v", in, known)
	}
	if _, known := RolloutTurnState([]byte(first + "\n")); known {
		t.Error("a rollout with no turn yet says nothing")
	}
	if !IsRolloutPath("/h/sessions/2026/12/01/rollout-2026-12-01T20-10-30-01a2333a-f018-71f2-a399-eccb85793c31.jsonl") || IsRolloutPath("/h/.claude/projects/x/5c0ffee0-1234-4abc-8def-0123456789ab.jsonl") {
		t.Error("IsRolloutPath")
	}
}

// FuzzParseRolloutLine: no input makes the rollout parser panic, and an
// error only ever comes for a line that is not JSON.
func FuzzParseRolloutLine(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "codex", "*.jsonl"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if len(l) > 0 && len(l) <= 4096 {
				f.Add([]byte(l))
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		acts, err := ParseRolloutLine(line)
		if err != nil && json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("valid JSON %q gave an error: %v", line, err)
		}
		for _, a := range acts {
			if a.Kind == "" || a.Source != Source {
				t.Fatalf("activity %+v", a)
			}
		}
	})
}
