package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

const hostileText = `A^[]0;pwned^GB^[[2JC^[]52;c;cHduZWQ=^GD\u009b31mE^MF\u0085G^?`

// checkInertJSON fails when the stream's bytes, or the strings its JSON
// documents decode to (what the page gets), hold a control character.
func checkInertJSON(t *testing.T, what, raw string) {
	t.Helper()
	check := func(s string) {
		for i, r := range s {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("%s: control character %#x at %d:\n%q", what, r, i, s)
			}
		}
	}
	check(raw)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			check(v)
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, line := range strings.Split(raw, "\n") {
		doc := strings.TrimPrefix(line, "data: ")
		if !strings.HasPrefix(doc, "{") {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v: %s", what, err, doc)
		}
		walk(v)
	}
}

// The SSE stream of a hostile transcript reply and the log of a hostile
// inbox text carry the fixtures' text only in visible form.
func TestHostileEventStreamAndLog(t *testing.T) {
	ws, _, tr := chatWorkspace(t)
	base, _ := startWorkspaceServer(t, ws)
	reply, err := os.ReadFile("../testdata/hostile/reply.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?session="+sid, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var stream strings.Builder
	appended := false
	for sc.Scan() {
		line := sc.Text()
		stream.WriteString(line + "\n")
		if !appended && strings.HasPrefix(line, "data:") { // the watcher is up: the session answers
			time.Sleep(300 * time.Millisecond)
			appendLines(t, tr, strings.TrimSuffix(string(reply), "\n"))
			appended = true
		}
		if line == "event: end_turn" {
			break
		}
	}
	raw := stream.String()
	checkInertJSON(t, "SSE", raw)
	if !strings.Contains(raw, "event: end_turn") || !strings.Contains(raw, strings.ReplaceAll(hostileText, `\`, `\\`)) {
		t.Fatalf("stream lacks the reply in visible form:\n%s", raw)
	}

	b, _ := json.Marshal(map[string]string{"session": sid, "text": "inbox text A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE\rF\u0085G\x7f"})
	if code, body := post(t, base+"/api/send", "application/json", base, string(b)); code != 200 {
		t.Fatalf("send: %d %v", code, body)
	}
	lr, err := http.Get(base + "/api/log?session=" + sid)
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Body.Close()
	var buf strings.Builder
	bufio.NewReader(lr.Body).WriteTo(&buf)
	checkInertJSON(t, "log", buf.String())
	if !strings.Contains(buf.String(), "inbox text ") {
		t.Fatalf("log: %s", buf.String())
	}
}
