package room

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
)

// hostileText is the visible form of the hostile fixtures' text
// (testdata/hostile): OSC 0, CSI 2 J, OSC 52, BEL, C1 CSI, CR, NEL, DEL.
const hostileText = `A^[]0;pwned^GB^[[2JC^[]52;c;cHduZWQ=^GD\u009b31mE^MF\u0085G^?`

func assertInert(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("%s: control character %#x at %d reaches the terminal:\n%q", what, r, i, out)
		}
	}
	if !strings.Contains(out, hostileText) {
		t.Fatalf("%s: the hostile text is not shown visibly:\n%q", what, out)
	}
}

// The room's inline reply of the orchestrator lane, from a hostile
// transcript: every line labelled, nothing a terminal acts on.
func TestChatHostileReplyInline(t *testing.T) {
	h := newHarness(t, "y")
	s, tr := simSession(t, h, simSID)
	reply, err := os.ReadFile("../testdata/hostile/reply.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := h.e.Process(ctx, "/agent orchestrator"); err != nil {
		t.Fatal(err)
	}
	go func() {
		waitQueued(t, s)
		time.Sleep(20 * time.Millisecond)
		res, err := s.Claim(conversation.LaneHook)
		if err != nil || !res.OK {
			t.Errorf("claim: %v %+v", err, res)
			return
		}
		appendTranscript(t, tr, `{"type":"user","isMeta":true,"message":{"role":"user","content":`+jsonString("Stop hook feedback:\n"+s.Frame(res.Message))+`}}`,
			strings.TrimSuffix(string(reply), "\n"))
	}()
	if _, err := h.e.Process(ctx, "inbox text A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE\rF\u0085G\x7f"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	assertInert(t, "room", out)
	for _, want := range []string{"│ inbox text " + hostileText, "[orchestrator] ⚙ Bash: show A^[]0;pwned", "[orchestrator] reply line one " + hostileText,
		"\n[orchestrator] reply line two " + hostileText + "\n", "orchestrator: ✓ end of turn"} {
		if !strings.Contains(out, want) {
			t.Errorf("room output lacks %q:\n%s", want, out)
		}
	}
}

// A prompt with a bidi override and zero-width characters is previewed
// with them shown by code point, so the preview reads as what would run.
func TestPreviewShowsBidiAndZeroWidth(t *testing.T) {
	h := newHarness(t, "n")
	h.e.Process(context.Background(), "delete the \u202etmp\u202c folder\u200b please \x1b[2J")
	out := h.out.String()
	if !strings.Contains(out, "│ delete the <U+202E>tmp<U+202C> folder<U+200B> please ^[[2J") {
		t.Fatalf("preview does not show the hidden characters:\n%q", out)
	}
	for i, r := range out {
		if r >= 0x80 && r <= 0x9f || r == 0x202e || r == 0x202c || r == 0x200b {
			t.Fatalf("U+%04X at %d reaches the terminal:\n%q", r, i, out)
		}
	}
}
