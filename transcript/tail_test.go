package transcript

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
	caughtUp := make(chan struct{}, 1) // each time the tail read all there is
	go func() {
		done <- Tail(ctx, TailOptions{Path: p, Offset: start, Follow: true, OnActivity: c.on, OnSkip: func(o int64, w string) { t.Log("skip", o, w); c.skip(o, w) }, Poll: 2 * time.Second,
			OnCaughtUp: func() (bool, time.Duration) {
				select {
				case caughtUp <- struct{}{}:
				default:
				}
				return true, 0
			}})
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
	<-caughtUp // the tail is at the end of the file
	appendStr(lineTool[:40])
	<-caughtUp // one report may have been queued before the piece: the next one is after it
	<-caughtUp
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

// The real 2.1.328 chat transcript (see testdata): tailing it
// collapses the end-of-turn pairs.
func TestTailClaude2328Chat(t *testing.T) {
	var c collector
	if err := Tail(context.Background(), TailOptions{Path: "testdata/claude-2.1.328-chat.jsonl", OnActivity: c.on, OnSkip: c.skip}); err != nil {
		t.Fatal(err)
	}
	if got, want := c.kinds(), "user,text,done,delivered,text,done,delivered,text,done"; got != want {
		t.Errorf("kinds = %s, want %s", got, want)
	}
}

// Tail reads a rollout with the rollout parser, so Watch and `tail` follow
// Codex threads.
func TestTailRollout(t *testing.T) {
	var c collector
	err := Tail(context.Background(), TailOptions{Path: "testdata/codex/rollout-0.169.0-exec-hook-delivery.jsonl", OnActivity: c.on, OnSkip: c.skip})
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, a := range c.acts {
		if a.Kind != events.ActUsage {
			ks = append(ks, string(a.Kind))
		}
	}
	if got, want := strings.Join(ks, ","), "user,tool,tool_result,text,delivered,thinking,text,done"; got != want || len(c.skips) != 0 {
		t.Fatalf("activities %s, want %s (skips %v)", got, want, c.skips)
	}
}
