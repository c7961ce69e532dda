package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The acceptance fixtures of issue 13: a transcript reply whose thinking,
// tool command, failed tool output and text carry OSC, CSI, BEL, C1, CR
// and DEL (testdata/hostile), and a log whose events carry them.

// assertInert fails when out holds a control character of content (these
// commands print no colour into a buffer, so no ESC at all is allowed) or
// does not show the hostile text visibly.
func assertInert(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("%s: control character %#x at %d reaches the terminal:\n%q", what, r, i, out)
		}
	}
	if !strings.Contains(out, `A^[]0;pwned^GB^[[2JC^[]52;c;cHduZWQ=^GD\u009b31mE^MF\u0085G^?`) {
		t.Fatalf("%s: the hostile text is not shown visibly:\n%q", what, out)
	}
}

func hostileReply(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/hostile/reply.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHostileTail(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws, s := chatWorkspace(t)
	tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
	os.WriteFile(tr, []byte(`{"type":"user","message":{"role":"user","content":"inbox text A\u001b]0;pwned\u0007B\u001b[2JC\u001b]52;c;cHduZWQ=\u0007D\u009b31mE\rF\u0085G\u007f"}}`+"\n"+hostileReply(t)), 0o600)
	s.Register(conversation.Registration{TranscriptPath: tr, Cwd: ws})
	code, out, errOut := runCLI(t, "", "tail", "--session", chatSID, "--workspace", ws, "--from-start", "--no-follow")
	if code != 0 {
		t.Fatalf("tail: %q %d", errOut, code)
	}
	assertInert(t, "tail", out)
	for _, want := range []string{"[you] inbox text A^[]0;pwned", "[orchestrator] ⚙ Bash: show A^[]0;pwned", "tool failed: failed: A^[]0;pwned",
		"[orchestrator] reply line one A^[]0;pwned", "\n[orchestrator] reply line two A^[]0;pwned"} {
		if !strings.Contains(out, want) {
			t.Errorf("tail lacks %q:\n%s", want, out)
		}
	}
}

func TestHostileSendFollow(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws, s := chatWorkspace(t)
	tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
	os.WriteFile(tr, nil, 0o600)
	s.Register(conversation.Registration{TranscriptPath: tr, Cwd: ws})
	s.RecordProcess(procfacts.ThisProcess()) // the session runs (as this test)
	reply := hostileReply(t)
	go func() { // the session: its Stop hook claims the message, then it answers
		deadline := time.Now().Add(time.Minute) // a hang guard
		for time.Now().Before(deadline) {
			res, err := s.Claim(conversation.LaneHook)
			if err == nil && res.OK {
				f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0o600)
				f.WriteString(`{"type":"user","isMeta":true,"message":{"role":"user","content":` + jsonQuote("Stop hook feedback:\n"+s.Frame(res.Message)) + "}}\n" + reply)
				f.Close()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code, out, errOut := runCLI(t, "", "send", "--lead", "--follow", "--workspace", ws, "hello")
	if code != 0 {
		t.Fatalf("send --follow: %q %q %d", out, errOut, code)
	}
	assertInert(t, "send --follow", out)
	for _, want := range []string{"delivered via hook", "[orchestrator] reply line one A^[]0;pwned", "\n[orchestrator] reply line two A^[]0;pwned", "[orchestrator] ✓ end of turn"} {
		if !strings.Contains(out, want) {
			t.Errorf("send --follow lacks %q:\n%s", want, out)
		}
	}
}

func TestHostileReplay(t *testing.T) {
	code, out, errOut := runCLI(t, "", "replay", "--file", "testdata/hostile/events.jsonl")
	if code != 0 {
		t.Fatalf("replay: %q %d", errOut, code)
	}
	assertInert(t, "replay", out)
	if !strings.Contains(out, "\n    orchestrator/orchA^[]0;pwned") {
		t.Errorf("continuation line without its speaker:\n%s", out)
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
