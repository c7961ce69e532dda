package events

import (
	"encoding/json"
	"testing"
	"time"
)

func checkActivityJSON(t *testing.T, a Activity) {
	t.Helper()
	want, err := json.Marshal(a)
	got, gerr := AppendActivityJSON([]byte("x"), a)
	if (err != nil) != (gerr != nil) {
		t.Fatalf("json.Marshal error %v, AppendActivityJSON error %v", err, gerr)
	}
	if err != nil {
		if string(got) != "x" {
			t.Fatalf("failed but wrote %q", got)
		}
		return
	}
	if string(got[1:]) != string(EscapeJSON(want)) {
		t.Fatalf("AppendActivityJSON differs from json.Marshal\n got: %s\nwant: %s", got, want)
	}
}

func TestAppendActivityJSON(t *testing.T) {
	code := 3
	for _, a := range []Activity{
		{},
		{Source: "orchestrator", Kind: ActText, Text: "hi <b> & \"q\" \\ \n\r\t\b\f\x01\x7f é \u2028\u2029 \xff\xfe 😀", ID: "m", Session: "s", Time: time.Date(2026, 11, 30, 4, 48, 55, 217000000, time.UTC)},
		{Source: "orchestrator", Kind: ActTool, Tool: "Bash", Detail: "ls -la", ID: "t", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800))},
		{Source: "claude", Kind: ActToolResult, Text: "x", IsError: true, ExitCode: &code, StopReason: "end_turn"},
		{Source: "claude", Kind: ActUsage, Usage: &Usage{InputTokens: 5, CostUSD: 0.25}},
		{Source: "x", Kind: ActDone, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Source: "x", Kind: ActDone, Time: time.Date(2026, 1, 1, 0, 0, 0, 1, time.FixedZone("", -3600))},
		{Source: "x", Kind: ActDone, Time: time.Date(2026, 1, 1, 0, 0, 0, 1, time.FixedZone("", 25*3600))},
		{Source: "x", Kind: ActDone, Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		checkActivityJSON(t, a)
	}
}

// FuzzAppendActivityJSON: byte for byte what json.Marshal and EscapeJSON write.
func FuzzAppendActivityJSON(f *testing.F) {
	f.Add("text <&> \u2028", "Bash", "d\x00", "id", int64(1764478135), 217000000, true)
	f.Add("\xff", "", "", "", int64(0), 0, false)
	f.Fuzz(func(t *testing.T, text, tool, detail, id string, sec int64, nsec int, isErr bool) {
		a := Activity{Source: "orchestrator", Kind: ActText, Text: text, Tool: tool, Detail: detail, ID: id, Session: detail + id, IsError: isErr}
		if sec != 0 {
			a.Time = time.Unix(sec, int64(nsec)%1e9).In(time.FixedZone("", nsec%(30*3600)))
		}
		checkActivityJSON(t, a)
	})
}
