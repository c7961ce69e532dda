package room

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// Input safety through a real pty, with the real claude CLI against the
// mock: a paste is one message and answers nothing, a key typed before a
// preview confirms nothing, and without a terminal no agent runs.

func countKind(list []events.Event, k events.Kind) int {
	n := 0
	for _, e := range list {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func TestE2EPastedBlockIsOneMessageAndConfirmsNothing(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("should not run")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "\x1b[200~first line of the question\r\ny\r\nthird line\x1b[201~")
	p.until(t, "«paste 1: 3 lines, ")
	p.send(t, "\r")
	p.until(t, "│ first line of the question")
	p.until(t, "│ y")
	p.until(t, "│ third line")
	p.until(t, "run this? [y/N/e] ")
	// A paste while asking answers nothing either.
	p.send(t, "\x1b[200~y\r\x1b[201~")
	p.until(t, "ignored a paste while asking")
	time.Sleep(300 * time.Millisecond)
	p.send(t, "n\r")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude was started: the mock got %d requests", n)
	}
	list := readLog(t, dir)
	if n := countKind(list, events.KindPromptPreview); n != 1 {
		t.Fatalf("%d previews, want 1", n)
	}
	if n := strings.Count(p.String(), "preview: /ask"); n != 1 {
		t.Fatalf("%d previews on screen:\n%s", n, p.String())
	}
}

func TestE2ETypedAheadYesConfirmsNothing(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("## Goal\nx")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\ry\r") // the y arrives before the preview exists
	p.until(t, "run this? [y/N/e] ")
	time.Sleep(500 * time.Millisecond)
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("a y typed before the preview started claude (%d requests)", n)
	}
	p.send(t, "n\r")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("the mock got %d requests", n)
	}
}

func TestPTYContinuationLines(t *testing.T) {
	fr := &fakeRunner{}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	p.send(t, "line one\\\r")
	p.until(t, "… ")
	p.send(t, "line two\x1b\r") // Alt-Enter
	p.until(t, "… ")
	p.send(t, "line three\r")
	p.until(t, "│ line one")
	p.until(t, "│ line two")
	p.until(t, "│ line three")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	if fr.runs() != 0 {
		t.Fatal("ran")
	}
}

func TestPipedStdinRunsNoAgentWithoutYes(t *testing.T) {
	bin, fake := binaries(t)
	dir := newRepo(t)
	pids := filepath.Join(t.TempDir(), "pids")
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_COLOR=1", "RELAY_BATON_CLAUDE=" + fake, "FAKE_AGENT_PIDS=" + pids}
		cmd.Stdin = strings.NewReader("/plan add a flag\ny\n")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	out := run("chat")
	if _, err := os.Stat(pids); err == nil {
		t.Fatalf("an agent ran with piped stdin and no --yes:\n%s", out)
	}
	if strings.Count(out, "pass --yes") != 2 {
		t.Fatalf("output:\n%s", out)
	}
	out = run("chat", "--yes")
	b, err := os.ReadFile(pids)
	if err != nil || len(strings.Fields(string(b))) == 0 {
		t.Fatalf("chat --yes ran no agent: %v\n%s", err, out)
	}
}

// The parser on its own: markers split across reads, Alt-Enter, a long
// burst, ask mode and Flush.
func TestTermInputParser(t *testing.T) {
	in := newTermInput(eofReader{}, -1)
	<-in.stopped
	in.err = nil
	feedAll := func(parts ...string) {
		for _, p := range parts {
			in.feed([]byte(p))
		}
	}
	read := func() string {
		var out []byte
		b := make([]byte, 8)
		for len(in.keys) > 0 {
			n, _ := in.Read(b)
			out = append(out, b[:n]...)
		}
		return string(out)
	}
	feedAll("ab\x1b[2", "00~one\ntwo\x1b[20", "1~cd\r")
	got := read()
	if !strings.HasPrefix(got, "ab«paste 1: 2 lines, 7 chars»cd\r") {
		t.Fatalf("keys %q", got)
	}
	if exp := in.Expand(strings.TrimSuffix(got, "\r")); exp != "abone\ntwocd" {
		t.Fatalf("expanded %q", exp)
	}
	feedAll("\x1b[200~word\x1b[201~", "\x1b\r", "\x1b[A")
	if got := read(); got != "word\\\r\x1b[A" {
		t.Fatalf("short paste, Alt-Enter, arrow: %q", got)
	}
	long := strings.Repeat("z", 5000)
	in.feed([]byte(long + "\r"))
	got = read()
	if len(got) > LongRun+100 || !strings.HasSuffix(got, "\r") {
		t.Fatalf("a long burst reached the editor whole: %d bytes", len(got))
	}
	if exp := in.Expand(strings.TrimSuffix(got, "\r")); exp != long {
		t.Fatalf("long line expanded to %d bytes", len(exp))
	}
	in.SetAsk(true)
	feedAll("\x1b[200~y\r\x1b[201~")
	if got := read(); got != "" || in.SetAsk(false) != 1 {
		// (SetAsk reports the pastes dropped while asking)
		t.Fatalf("a paste while asking gave keys %q", got)
	}
	feedAll("y\r", "\x1b[200~half")
	if k, _ := in.Flush(); k != 2 {
		t.Fatalf("flushed %d keys", k)
	}
	feedAll(" of a paste\x1b[201~n\r")
	if got := read(); got != "n\r" {
		t.Fatalf("after Flush: %q", got)
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// On a terminal a confirmation takes one key, no Enter: v shows the whole
// preview and asks again, y runs; the rest of a typed "yes" and the Enter
// after it reach nothing.
func TestE2EOneKeyConfirmation(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("one key was enough")))
	dir := newRepo(t)
	p := startOffline(t, dir, a, nil)
	p.until(t, "claude› ")
	p.send(t, "hello there\r")
	p.until(t, "e edits (one key, no Enter) ")
	if strings.Contains(p.String(), "cwd:") {
		t.Fatalf("the short preview shows the directory:\n%s", p.String())
	}
	p.send(t, "v")
	p.until(t, "cwd:")
	p.until(t, "env stripped:")
	p.until(t, "run this? [y/N/e] y runs, v views all, e edits (one key, no Enter) ")
	p.send(t, "yes\r")
	p.untilWithin(t, "one key was enough", 90*time.Second)
	p.untilWithin(t, "claude: exit 0", 30*time.Second)
	p.send(t, "/note after\r")
	p.until(t, "noted.")
	p.send(t, "\x04")
	p.wait(t)
	if n := len(a.Requests()); n == 0 {
		t.Fatal("y did not start claude")
	}
	var notes []string
	for _, e := range readLog(t, dir) {
		if e.Role == events.RoleUser && e.Kind == events.KindMessage {
			notes = append(notes, e.Text)
		}
	}
	// "es" and the Enter reached no prompt: the only user messages are the question and the note.
	if strings.Join(notes, "|") != "hello there|after" {
		t.Fatalf("user messages %q", notes)
	}
}
