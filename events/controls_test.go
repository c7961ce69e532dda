package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// hostileText holds every kind of character a JSON output must escape.
const hostileText = "c1 csi \u009b2J nel \u0085 rlo \u202eevil\u202c lri \u2066x\u2069 lrm \u200e rlm \u200f alm \u061c zw \u200b\u200c\u200d wj \u2060 bom \ufeff del \x7f esc \x1b ok é ✓"

// checkEscaped fails when out holds a character a terminal acts on or that
// hides itself, or when it does not decode back to want.
func checkEscaped(t *testing.T, out []byte) {
	t.Helper()
	for i, r := range string(out) {
		if r < 0x20 && r != '\n' || r == 0x7f || HiddenControl(r) {
			t.Fatalf("unescaped U+%04X at %d in %s", r, i, out)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	b, _ := json.Marshal(map[string]string{"text": hostileText, "k\u202e": "v"})
	out := EscapeJSON(b)
	checkEscaped(t, out)
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["text"] != hostileText || back["k\u202e"] != "v" {
		t.Fatalf("escaped JSON does not decode to the same text: %v %q", err, back)
	}
	for _, want := range []string{`\u009b`, `\u0085`, `\u202e`, `\u2066`, `\u200b`, `\u2060`, `\ufeff`, `\u061c`, `\u007f`, `\u001b`, "é ✓"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("escaped JSON lacks %s: %s", want, out)
		}
	}
	clean := []byte(`{"a":"plain ünïcode ✓"}`)
	if got := EscapeJSON(clean); &got[0] != &clean[0] {
		t.Errorf("clean JSON was copied")
	}
}

func TestFastJSONEscapesHiddenControls(t *testing.T) {
	e := New("s1", RoleClaude, KindMessage, hostileText)
	meta, _ := json.Marshal(map[string]any{"k": hostileText})
	e.Meta = meta
	checkEscaped(t, AppendJSON(nil, e))
	a := Activity{Source: "claude", Kind: ActText, Text: hostileText, Tool: hostileText, Time: time.Unix(1, 0)}
	b, err := AppendActivityJSON(nil, a)
	if err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, b)
	var back Activity
	if err := json.Unmarshal(b, &back); err != nil || back.Text != hostileText {
		t.Fatalf("decode: %v %q", err, back.Text)
	}
	a.Usage = &Usage{InputTokens: 1}
	b, _ = AppendActivityJSON(nil, a)
	checkEscaped(t, b)
}
