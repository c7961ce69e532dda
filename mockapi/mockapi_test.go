package mockapi

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// events reads an SSE response and returns its event names.
func sseEvents(t *testing.T, resp *http.Response) (names []string, data []string) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if n, ok := strings.CutPrefix(l, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			data = append(data, d)
		}
	}
	return names, data
}

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

func TestAnthropicScript(t *testing.T) {
	a := newAnthropic(t,
		Reply(Thinking("hm"), Text("hi"), Bash("ls")),
		Step{Status: 500, Message: "boom"},
	)
	withTools := `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`
	// A side query without tools does not consume the script.
	resp, err := post(t, context.Background(), a.URL+"/v1/messages?beta=true", `{"messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := sseEvents(t, resp)
	resp.Body.Close()
	if len(names) != 6 || names[0] != "message_start" {
		t.Fatalf("side query: %v", names)
	}
	resp, err = post(t, context.Background(), a.URL+"/v1/messages?beta=true", withTools)
	if err != nil {
		t.Fatal(err)
	}
	names, data := sseEvents(t, resp)
	resp.Body.Close()
	want := "message_start content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v", names)
	}
	if !strings.Contains(strings.Join(data, "\n"), `"stop_reason":"tool_use"`) || !strings.Contains(strings.Join(data, "\n"), `"thinking_delta"`) {
		t.Fatalf("data %v", data)
	}
	resp, err = post(t, context.Background(), a.URL+"/v1/messages", withTools)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := len(a.Agent()); got != 2 || len(a.Requests()) != 3 {
		t.Fatalf("recorded %d agent / %d all", got, len(a.Requests()))
	}
	if LastUserText(a.Agent()[0]) != "hello\n" {
		t.Fatalf("last user text %q", LastUserText(a.Agent()[0]))
	}
}

func TestStallEndsOnClose(t *testing.T) {
	o := newOpenAI(t, Step{Stall: true})
	resp, err := post(t, context.Background(), o.URL+"/responses", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []string)
	go func() { n, _ := sseEvents(t, resp); done <- n }()
	select {
	case n := <-done:
		t.Fatalf("stalled stream ended early: %v", n)
	case <-time.After(200 * time.Millisecond):
	}
	o.Close()
	select {
	case n := <-done:
		if len(n) != 1 || n[0] != "response.created" {
			t.Fatalf("events %v", n)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("Close did not end the stalled stream")
	}
}

func TestOpenAIScript(t *testing.T) {
	o := newOpenAI(t, Reply(Thinking("r"), Exec("echo hi"), Text("ok")))
	resp, err := post(t, context.Background(), o.URL+"/responses", `{"input":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	names, data := sseEvents(t, resp)
	resp.Body.Close()
	want := "response.created response.output_item.done response.output_item.done response.output_item.added response.output_text.delta response.output_item.done response.completed"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v", names)
	}
	all := strings.Join(data, "\n")
	if !strings.Contains(all, `"name":"exec_command"`) || !strings.Contains(all, `"arguments":"{\"cmd\":\"echo hi\"}"`) || !strings.Contains(all, `"usage"`) {
		t.Fatalf("data %s", all)
	}
	if len(o.Requests()) != 1 {
		t.Fatal("request not recorded")
	}
}

func TestAnthropicWhen(t *testing.T) {
	a := newAnthropic(t, Reply(Text("scripted one")), Reply(Text("scripted two")))
	a.When("CHAT-42", Reply(Text("answer to the chat")))
	ask := func(text string) string {
		body := `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"earlier CHAT-42"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":` + strconv.Quote(text) + `}]}]}`
		resp, err := post(t, context.Background(), a.URL+"/v1/messages", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, data := sseEvents(t, resp)
		return strings.Join(data, "\n")
	}
	// Only the last user message counts; a match does not advance the script.
	if got := ask("hello"); !strings.Contains(got, "scripted one") {
		t.Fatalf("first: %s", got)
	}
	if got := ask("Stop hook feedback:\n<chat-message>CHAT-42</chat-message>"); !strings.Contains(got, "answer to the chat") {
		t.Fatalf("matched: %s", got)
	}
	if got := ask("next"); !strings.Contains(got, "scripted two") {
		t.Fatalf("after the match: %s", got)
	}
}

// WhenTail matches what follows the last assistant message, a system
// message included (a socket message absorbed at a tool result), and
// nothing before it.
func TestAnthropicWhenTail(t *testing.T) {
	a := newAnthropic(t, Reply(Text("scripted")))
	a.WhenTail("SOCK-7", Reply(Text("answer to the socket message")))
	ask := func(tail string) string {
		body := `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"earlier SOCK-7"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"done"}]}` + tail + `]}`
		resp, err := post(t, context.Background(), a.URL+"/v1/messages", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, data := sseEvents(t, resp)
		return strings.Join(data, "\n")
	}
	if got := ask(""); !strings.Contains(got, "scripted") {
		t.Fatalf("an earlier message matched: %s", got)
	}
	if got := ask(`,{"role":"system","content":[{"type":"text","text":"Another Claude session sent a message while you were working:\nSOCK-7"}]}`); !strings.Contains(got, "answer to the socket message") {
		t.Fatalf("the system message after the tool result did not match: %s", got)
	}
	rs := a.Requests()
	if tail := TailText(rs[len(rs)-1]); !strings.Contains(tail, "done") || !strings.Contains(tail, "SOCK-7") || strings.Contains(tail, "earlier") {
		t.Fatalf("TailText = %q", tail)
	}
}

func newAnthropic(t *testing.T, steps ...Step) *Anthropic {
	t.Helper()
	a, err := NewAnthropic(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func newOpenAI(t *testing.T, steps ...Step) *OpenAI {
	t.Helper()
	o, err := NewOpenAI(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}
