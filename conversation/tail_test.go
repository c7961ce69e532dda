package conversation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
)

const (
	lineTool = `{"type":"assistant","isSidechain":false,"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 5","description":"Wait"}}],"stop_reason":"tool_use"}}`
	lineText = `{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"the answer"}],"stop_reason":"end_turn"}}`
)

type collector struct {
	mu    sync.Mutex
	acts  []events.Activity
	skips []string
}

func (c *collector) on(_ int64, acts []events.Activity) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, acts...)
	return true
}

func (c *collector) skip(_ int64, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skips = append(c.skips, why)
}

func (c *collector) kinds() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var k []string
	for _, a := range c.acts {
		k = append(k, string(a.Kind))
	}
	return strings.Join(k, ",")
}

// A transcript with unknown types, junk, a 10 MB line and a torn last line:
// no crash, and the known blocks still stream.
func TestTailBadTranscript(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	var b strings.Builder
	b.WriteString(`{"type":"api-request-blob","blob":"xyz"}` + "\n")
	b.WriteString(lineTool + "\n")
	b.WriteString("this is not json\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("z", 10<<20) + `"}]}}` + "\n")
	b.WriteString(`{"type":"future-thing","nested":{"a":[1,2,3]}}` + "\n")
	b.WriteString(lineText + "\n")
	b.WriteString(`{"type":"assistant","message":{"id":"m3","content":[{"type":"text","text":"torn`) // no newline
	os.WriteFile(p, []byte(b.String()), 0o600)
	var c collector
	if err := Tail(context.Background(), TailOptions{Path: p, OnActivity: c.on, OnSkip: c.skip}); err != nil {
		t.Fatal(err)
	}
	if got := c.kinds(); got != "tool,text,done" {
		t.Errorf("kinds = %s, want tool,text,done", got)
	}
	if len(c.skips) != 2 || !strings.Contains(strings.Join(c.skips, "|"), "MB skipped") {
		t.Errorf("skips = %q, want the junk line and the 10 MB line", c.skips)
	}
}

func TestTailFollowTornLineTruncationReplacement(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte(`{"type":"system","subtype":"init"}`+"\n"), 0o600)
	var c collector
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := Size(p)
	go func() {
		done <- Tail(ctx, TailOptions{Path: p, Offset: start, Follow: true, OnActivity: c.on, OnSkip: func(o int64, w string) { t.Log("skip", o, w); c.skip(o, w) }, Poll: 2 * time.Second})
	}()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if c.kinds() == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("kinds = %q, want %q", c.kinds(), want)
	}
	appendStr := func(s string) {
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o600)
		f.WriteString(s)
		f.Close()
	}
	// A line written in two pieces is read once, whole.
	appendStr(lineTool[:40])
	time.Sleep(100 * time.Millisecond)
	if c.kinds() != "" {
		t.Fatalf("torn line emitted: %s", c.kinds())
	}
	appendStr(lineTool[40:] + "\n")
	waitFor("tool")
	// Truncation: read again from the start.
	os.WriteFile(p, []byte(lineText+"\n"), 0o600)
	waitFor("tool,text,done")
	// Replacement by rename.
	tmp := filepath.Join(dir, "new")
	os.WriteFile(tmp, []byte(lineTool+"\n"+`{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"a longer line so the new file is bigger than the old one"}],"stop_reason":"end_turn"}}`+"\n"), 0o600)
	os.Rename(tmp, p)
	waitFor("tool,text,done,tool,text,done")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTailWaitsForMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "later.jsonl")
	var c collector
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		time.Sleep(100 * time.Millisecond)
		os.WriteFile(p, []byte(lineText+"\n"), 0o600)
	}()
	err := Tail(ctx, TailOptions{Path: p, Follow: true, OnActivity: func(o int64, a []events.Activity) bool {
		c.on(o, a)
		return false // stop at the first line
	}})
	if err != nil || c.kinds() != "text,done" {
		t.Fatalf("err %v, kinds %s", err, c.kinds())
	}
	if err := Tail(context.Background(), TailOptions{Path: p + ".none"}); err == nil {
		t.Error("no error for a missing file without --follow")
	}
}

// Watch: queued, delivered by a lane, confirmed in the transcript, the
// reply's activities, done.
func TestSendAndWatch(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	s, _ := OpenSession(ws, testSID)
	tr := filepath.Join(t.TempDir(), testSID+".jsonl")
	os.WriteFile(tr, []byte(lineText+"\n"), 0o600) // an earlier turn: must not count
	if err := s.Register(Registration{TranscriptPath: tr, Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	s.Enqueue("x", "someone else first")
	r, err := Send(ws, testSID, "room", "how is it going?")
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != int64(len(lineText)+1) || r.TranscriptPath != tr {
		t.Fatalf("receipt = %+v", r)
	}
	var mu sync.Mutex
	var got []string
	var reply string
	errc := make(chan error, 1)
	go func() {
		errc <- Watch(context.Background(), r, WatchOptions{Poll: 50 * time.Millisecond}, func(u Update) {
			mu.Lock()
			defer mu.Unlock()
			e := string(u.Kind)
			switch u.Kind {
			case UpdQueued:
				e += "(" + string(rune('0'+u.Ahead)) + ")"
			case UpdDelivered:
				e += "(" + string(u.Lane) + ")"
			case UpdActivity:
				e += "(" + string(u.Activity.Kind) + ")"
			case UpdDone:
				reply = u.Reply
			}
			got = append(got, e)
		})
	}()
	time.Sleep(150 * time.Millisecond)
	// The session finishes its turn: the Stop hook delivers the first message.
	first, _ := s.Claim(LaneHook)
	appendLine(t, tr, `{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\n`+strings.ReplaceAll(s.Frame(first.Message), "\n", `\n`)+`"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m5","role":"assistant","content":[{"type":"text","text":"answer to the other"}],"stop_reason":"end_turn"}}`)
	time.Sleep(150 * time.Millisecond)
	// Then ours, by the idle lane.
	mine, _ := s.Claim(LaneRewake)
	if mine.Message.ID != r.Message.ID {
		t.Fatalf("claimed %s, want %s", mine.Message.ID, r.Message.ID)
	}
	appendLine(t, tr, `{"type":"user","isMeta":true,"message":{"role":"user","content":"<system-reminder>Stop hook blocking error from command \"rb\": [relay-baton chat message `+r.Message.ID+`]</system-reminder>"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m6","role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/x"}}],"stop_reason":"tool_use"}}`)
	appendLine(t, tr, `{"type":"assistant","message":{"id":"m7","role":"assistant","content":[{"type":"text","text":"all good"}],"stop_reason":"end_turn"}}`)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Watch did not finish; got %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "queued(1),queued(0),delivered(rewake),confirmed,activity(thinking),activity(tool),activity(text),done"
	if strings.Join(got, ",") != want {
		t.Errorf("updates = %s\nwant      %s", strings.Join(got, ","), want)
	}
	if reply != "all good" {
		t.Errorf("reply = %q", reply)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), `"role":"agent","text":"all good"`) {
		t.Errorf("log.jsonl = %s", log)
	}
}

func TestWatchCancelledAndUnreadable(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws := t.TempDir()
	s, _ := OpenSession(ws, testSID)
	s.Ensure()
	r, _ := Send(ws, testSID, "", "cancel me")
	var kinds []UpdateKind
	go func() { time.Sleep(100 * time.Millisecond); s.Cancel(r.Message.ID) }()
	if err := Watch(context.Background(), r, WatchOptions{Poll: 50 * time.Millisecond}, func(u Update) { kinds = append(kinds, u.Kind) }); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[1] != UpdCancelled {
		t.Errorf("updates = %v, want queued, cancelled", kinds)
	}
	r2, _ := Send(ws, testSID, "", "no transcript")
	s.Claim(LaneMonitor)
	kinds = nil
	if err := Watch(context.Background(), r2, WatchOptions{}, func(u Update) { kinds = append(kinds, u.Kind) }); err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[0] != UpdDelivered || kinds[1] != UpdUnreadable {
		t.Errorf("updates = %v, want delivered, unreadable", kinds)
	}
}

func appendLine(t *testing.T, p, line string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line + "\n")
	f.Close()
}

// corpusSession is a file of the corpus copied into the repository
// (testdata/corpus/README.md names its source and licence).
const corpusSession = "../testdata/corpus/marot-spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"

// A real 2.1.39 session (3 MB, progress lines, a compaction) tails to the
// same activities as parsing it line by line.
func TestTailCorpusSession(t *testing.T) {
	if _, err := os.Stat(corpusSession); err != nil {
		t.Fatalf("corpus file missing (testdata/corpus is part of the repository): %v", err)
	}
	var c collector
	if err := Tail(context.Background(), TailOptions{Path: corpusSession, OnActivity: c.on, OnSkip: c.skip}); err != nil {
		t.Fatal(err)
	}
	tools, texts := strings.Count(c.kinds(), "tool,")+strings.Count(c.kinds(), "tool_result"), strings.Count(c.kinds(), "text")
	if tools < 100 || texts < 10 || len(c.skips) != 0 {
		t.Errorf("tools %d, texts %d, skips %v", tools, texts, c.skips)
	}
}

// The transcript scan `relay-baton tail --from-start --no-follow` does.
func BenchmarkTailCorpusSession(b *testing.B) {
	fi, err := os.Stat(corpusSession)
	if err != nil {
		b.Fatalf("corpus file missing (testdata/corpus is part of the repository): %v", err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		n := 0
		if err := Tail(context.Background(), TailOptions{Path: corpusSession, OnActivity: func(_ int64, a []events.Activity) bool { n += len(a); return true }}); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}

// The real 2.1.328 chat transcript (see agents/testdata): tailing it
// collapses the end-of-turn pairs.
func TestTailClaude2328Chat(t *testing.T) {
	var c collector
	if err := Tail(context.Background(), TailOptions{Path: "../agents/testdata/claude-2.1.328-chat.jsonl", OnActivity: c.on, OnSkip: c.skip}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.kinds(), "user,text,done,delivered,text,done,delivered,text,done"; got != want {
		t.Errorf("kinds = %s, want %s", got, want)
	}
}
