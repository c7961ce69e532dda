package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/events"
	"github.com/spf13/pflag"
)

// -update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func updateGolden() bool { return *update }

const goldenDir = "../testdata/replay"

var goldenNow = time.Date(2026, 5, 29, 12, 0, 0, 0, time.UTC)

// replayArgs runs Run as the command line would: flags parsed by
// AddFlags, then resolved.
func replayArgs(t *testing.T, ctx context.Context, w io.Writer, args ...string) error {
	t.Helper()
	fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	o := Options{Now: func() time.Time { return goldenNow }}
	resolve := AddFlags(fs, &o)
	color := fs.Bool("color", false, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := resolve(); err != nil {
		return err
	}
	o.Color = *color
	return Run(ctx, w, o)
}

func TestReplayGolden(t *testing.T) {
	log := filepath.Join(goldenDir, "conversation.jsonl")
	empty := filepath.Join(t.TempDir(), "conversation.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"text", []string{"--file", log}},
		{"json", []string{"--file", log, "--json"}},
		{"kind", []string{"--file", log, "--kind", "plan,review"}},
		{"role", []string{"--file", log, "--role", "orchestrator", "--role", "codex"}},
		{"session", []string{"--file", log, "--session", "sess-b"}},
		{"session-json", []string{"--file", log, "--session", "sess-b", "--json"}},
		{"limit", []string{"--file", log, "--limit", "3"}},
		{"limit-json", []string{"--file", log, "--limit", "2", "--json"}},
		{"limit-over", []string{"--file", log, "--limit", "100", "--role", "claude"}},
		{"since-duration", []string{"--file", log, "--since", "1h"}},
		{"since-time", []string{"--file", log, "--since", "2026-05-29T10:01:12.004Z", "--role", "claude,codex"}},
		{"no-match", []string{"--file", log, "--kind", "budget"}},
		{"color", []string{"--file", log, "--limit", "4", "--color"}},
		{"empty", []string{"--file", empty}},
		{"empty-json", []string{"--file", empty, "--json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := replayArgs(t, context.Background(), &out, c.args...); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(c.name, "json") && !json.Valid(out.Bytes()) {
				t.Errorf("--json output is not valid JSON:\n%s", out.String())
			}
			golden := filepath.Join(goldenDir, c.name+".golden")
			if updateGolden() {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./replay -run TestReplayGolden -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("replay %s: output differs from %s\n--- got\n%s\n--- want\n%s", strings.Join(c.args, " "), golden, out.String(), want)
			}
		})
	}
}

func TestReplayFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--limit", "-1"},
		{"--kind", "plan,nope"},
		{"--role", "robot"},
		{"--since", "yesterday"},
		{"--since", "-2h"},
	} {
		err := replayArgs(t, context.Background(), io.Discard, append([]string{"--file", "x"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: err = %v, want a message naming the flag", args, err)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := goldenNow
	for in, want := range map[string]time.Time{
		"2h":                        now.Add(-2 * time.Hour),
		"90m":                       now.Add(-90 * time.Minute),
		"3d":                        now.Add(-72 * time.Hour),
		"2026-05-29T10:00:00Z":      time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC),
		"2026-05-29T12:00:00+02:00": time.Date(2026, 5, 29, 10, 0, 0, 0, time.UTC),
		"2026-05-28":                time.Date(2026, 5, 28, 0, 0, 0, 0, time.UTC),
	} {
		got, err := ParseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestFormatEvent(t *testing.T) {
	e := events.Event{TS: "2026-05-29T10:00:00.000Z", Role: events.RoleRelayBaton, Kind: events.KindAgentRun,
		Text: "line one\nline two\x1b[31m\u0085", Meta: events.MetaJSON(`{"agent":"codex"}`)}
	got := FormatEvent(7, e, false)
	want := "7. [2026-05-29T10:00:00.000Z] relay-baton/codex agent_run: line one\n    relay-baton/codex │ line two^[[31m\\u0085"
	if got != want {
		t.Errorf("FormatEvent =\n%q\nwant\n%q", got, want)
	}
	e.Meta = events.MetaJSON(`{"agent":"relay-baton"}`)
	if got := FormatEvent(1, e, false); !strings.Contains(got, "] relay-baton agent_run:") {
		t.Errorf("agent equal to role must not be repeated: %q", got)
	}
	if got := FormatEvent(1, e, true); !strings.Contains(got, "\x1b[") {
		t.Errorf("color=true gave no colour: %q", got)
	}
	e.Meta = events.MetaJSON(`{"agent":"evil\u001b]0;title\u0007"}`)
	if got := FormatEvent(1, e, true); strings.Contains(got, "\x1b]") || !strings.Contains(got, "evil^[]0;title^G") {
		t.Errorf("control characters of meta.agent reached the terminal: %q", got)
	}
}

// A live screen's line for another screen's turn: its origin and local
// clock in front, every continuation line labelled again, all inert.
func TestFormatLive(t *testing.T) {
	ts := time.Date(2026, 5, 29, 10, 0, 7, 0, time.UTC)
	e := events.Event{TS: ts.Format(time.RFC3339Nano), Role: events.RoleRelayBaton, Kind: events.KindAgentRun,
		Text: "line one\nline two\x1b[31m", Meta: events.MetaJSON(`{"agent":"codex"}`)}
	got := FormatLive("page\x1b]0;x\a", e, false)
	clock := ts.Local().Format("15:04:05")
	want := "page^[]0;x^G · " + clock + " relay-baton/codex agent_run: line one\n  page^[]0;x^G │ relay-baton/codex │ line two^[[31m"
	if got != want {
		t.Errorf("FormatLive =\n%q\nwant\n%q", got, want)
	}
	e.TS = "not a time\x1b[2J"
	if got := FormatLive("page", e, false); !strings.HasPrefix(got, "page · not a time^[[2J relay-baton/codex") {
		t.Errorf("an unreadable time must be shown as logged: %q", got)
	}
}

func TestReplayMissingAndDirectory(t *testing.T) {
	dir := t.TempDir()
	err := Run(context.Background(), io.Discard, Options{File: filepath.Join(dir, "none.jsonl")})
	if !errors.Is(err, events.ErrNoLog) {
		t.Errorf("missing log: err = %v", err)
	}
	var out bytes.Buffer
	err = Run(context.Background(), &out, Options{File: dir, JSON: true})
	if err == nil || !strings.Contains(err.Error(), "directory") || out.Len() != 0 {
		t.Errorf("directory: err = %v, output %q", err, out.String())
	}
}

// The acceptance test for crash safety: truncate mid-line, append, replay.
func TestReplayAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	appendTexts(t, path, "one", "two", "three")
	b, _ := os.ReadFile(path)
	cut := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1 + 30
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
	appendTexts(t, path, "four")
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Options{File: path}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"1. [", "user message: one\n", "2. [", "user message: two\n", "3. [", "user message: four\n",
		"\n3 events; roles {user: 3}; kinds {message: 3}\n", "skipped 1 line of conversation.jsonl (1 malformed); first at line 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "three") {
		t.Errorf("torn line shown:\n%s", got)
	}
}

func appendTexts(t *testing.T, path string, texts ...string) {
	t.Helper()
	l, err := events.OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, s := range texts {
		if err := l.Append(events.New("s1", events.RoleUser, events.KindMessage, s)); err != nil {
			t.Fatal(err)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, buf *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReplayFollow(t *testing.T) {
	old := events.FollowPoll
	events.FollowPoll = 20 * time.Millisecond
	t.Cleanup(func() { events.FollowPoll = old })

	path := filepath.Join(t.TempDir(), "conversation.jsonl")
	appendTexts(t, path, "old one", "old two", "old three")
	ctx, cancel := context.WithCancel(context.Background())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, &buf, Options{File: path, Follow: true, Limit: 2, Kinds: []string{"message"}})
	}()
	waitFor(t, &buf, "-- following")
	if s := buf.String(); strings.Contains(s, "old one") || !strings.Contains(s, "1. [") || !strings.Contains(s, "old two") {
		t.Fatalf("backlog with --limit 2 wrong:\n%s", s)
	}
	appendTexts(t, path, "new one")
	waitFor(t, &buf, "user message: new one")
	l, _ := events.OpenLog(path)
	l.Append(events.New("s1", events.RoleClaude, events.KindPlan, "filtered out"))
	l.Close()
	appendTexts(t, path, "new two")
	waitFor(t, &buf, "4. [")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Replay --follow returned %v after cancel, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Replay --follow did not stop on cancel")
	}
	s := buf.String()
	if strings.Contains(s, "filtered out") || !strings.Contains(s, "4. [") || !strings.Contains(s, "user message: new two") {
		t.Errorf("follow output:\n%s", s)
	}
	if !strings.HasSuffix(s, "\n4 events; roles {user: 4}; kinds {message: 4}\n") {
		t.Errorf("no footer after follow:\n%s", s)
	}
}

func TestReplayFollowJSONLines(t *testing.T) {
	old := events.FollowPoll
	events.FollowPoll = 20 * time.Millisecond
	t.Cleanup(func() { events.FollowPoll = old })
	path := filepath.Join(t.TempDir(), "conversation.jsonl") // created later
	ctx, cancel := context.WithCancel(context.Background())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, &buf, Options{File: path, Follow: true, JSON: true}) }()
	time.Sleep(50 * time.Millisecond)
	appendTexts(t, path, "a", "b")
	waitFor(t, &buf, `"text":"b"`)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines, got:\n%s", buf.String())
	}
	for _, l := range lines {
		var e events.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Validate() != nil {
			t.Errorf("line %q: %v", l, err)
		}
	}
}

// ---- benchmarks ----

var benchLogs sync.Map // size -> path

// benchLog returns a generated log of n events, cached in the temp folder
// (generating a million events takes a few seconds).
func benchLog(b *testing.B, n int) string {
	if p, ok := benchLogs.Load(n); ok {
		return p.(string)
	}
	dir := filepath.Join(os.TempDir(), "relay-baton-bench")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, fmt.Sprintf("conversation-%d-v1.jsonl", n))
	if _, err := os.Stat(path); err != nil {
		tmp := path + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		r := rand.New(rand.NewPCG(1, uint64(n)))
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		words := strings.Fields("plan the change run the tests review the diff fix the parser update README add a flag handle empty input")
		var line []byte
		for i := range n {
			role := events.Roles[r.IntN(len(events.Roles))]
			e := events.Event{
				SchemaVersion: 1,
				ID:            fmt.Sprintf("evt_%08x-0000-4000-8000-%012x", i, r.Uint64()&0xffffffffffff),
				TS:            t0.Add(time.Duration(i) * 1500 * time.Millisecond).Format(events.TimeFormat),
				SessionID:     fmt.Sprintf("sess-%d", i/5000),
				Role:          role,
				Kind:          events.Kinds[r.IntN(len(events.Kinds))],
			}
			var sb strings.Builder
			for range 5 + r.IntN(25) {
				sb.WriteString(words[r.IntN(len(words))])
				sb.WriteByte(' ')
			}
			e.Text = strings.TrimSpace(sb.String())
			if r.IntN(10) < 6 {
				e.Meta = events.MetaJSON(`{"agent":"` + []string{"claude", "codex"}[r.IntN(2)] + `","exitCode":` + strconv.Itoa(r.IntN(2)) + `}`)
			}
			if r.IntN(10) < 2 {
				e.Refs = map[string]string{"plan": "plan.md"}
			}
			line = events.AppendJSON(line[:0], e)
			line = append(line, '\n')
			w.Write(line)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		os.Rename(tmp, path)
	}
	benchLogs.Store(n, path)
	return path
}

func benchReplay(b *testing.B, n int, o Options) {
	o.File = benchLog(b, n)
	fi, _ := os.Stat(o.File)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if err := Run(context.Background(), io.Discard, o); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (user+system, all threads) per replay: steadier than wall
	// time on a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkReplay1M: replay of a 1,000,000-event log to io.Discard.
func BenchmarkReplay1M(b *testing.B) {
	b.Run("text", func(b *testing.B) { benchReplay(b, 1_000_000, Options{}) })
	b.Run("json", func(b *testing.B) { benchReplay(b, 1_000_000, Options{JSON: true}) })
}

// BenchmarkReplayLimit20 shows --limit 20 memory flat in the log's size:
// peak-heap-bytes is the largest live+garbage heap seen during one replay
// (sampled every millisecond); it should not grow with the events count.
func BenchmarkReplayLimit20(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			path := benchLog(b, n)
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				runtime.GC()
				stop := samplePeakHeap(&peak)
				if err := Run(context.Background(), io.Discard, Options{File: path, Limit: 20}); err != nil {
					b.Fatal(err)
				}
				stop()
			}
			b.ReportMetric(float64(peak), "peak-heap-bytes")
		})
	}
}

func samplePeakHeap(peak *uint64) (stop func()) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	quit, done := make(chan struct{}), make(chan struct{})
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > *peak {
			*peak = v
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// Plain replay shows what each agent run cost, as its agent_run event logs
// it, and the total of the runs that match the filters (--limit or not).
func TestReplayTextShowsCosts(t *testing.T) {
	log := filepath.Join(t.TempDir(), "conversation.jsonl")
	lines := []string{
		`{"schemaVersion":1,"id":"evt_1","ts":"2026-05-29T10:00:00.000Z","sessionId":"s","role":"claude","kind":"agent_run","text":"claude plan: exit 0 in 2s","meta":{"agent":"claude","command":"plan","confirmed":true,"ran":true,"exitCode":0,"costUsd":0.00014,"inputTokens":10,"outputTokens":5}}`,
		`{"schemaVersion":1,"id":"evt_2","ts":"2026-05-29T10:01:00.000Z","sessionId":"s","role":"codex","kind":"agent_run","text":"codex execute: exit 0 in 3s","meta":{"agent":"codex","command":"execute","confirmed":true,"ran":true,"exitCode":0,"inputTokens":20,"cachedInputTokens":4,"outputTokens":7}}`,
		`{"schemaVersion":1,"id":"evt_3","ts":"2026-05-29T10:02:00.000Z","sessionId":"s","role":"claude","kind":"agent_run","text":"claude ask: declined","meta":{"agent":"claude","command":"ask","confirmed":false,"ran":false}}`,
		`{"schemaVersion":1,"id":"evt_4","ts":"2026-05-29T10:03:00.000Z","sessionId":"s","role":"claude","kind":"agent_run","text":"claude ask: exit 0 in 1s","meta":{"agent":"claude","command":"ask","confirmed":true,"ran":true,"exitCode":0,"costUsd":0.00028,"inputTokens":10,"outputTokens":5}}`,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := replayArgs(t, context.Background(), &out, "--file", log); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"claude plan: exit 0 in 2s · $0.00014, 10 in / 5 out tokens\n",
		"codex execute: exit 0 in 3s · 24 in / 7 out tokens\n",
		"claude ask: declined\n",
		"agent runs: 3 runs, $0.00042, 44 in / 17 out tokens\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing from:\n%s", want, got)
		}
	}
	out.Reset()
	if err := replayArgs(t, context.Background(), &out, "--file", log, "--limit", "1"); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "agent runs: 3 runs, $0.00042") {
		t.Errorf("--limit 1 lost the total of the runs:\n%s", got)
	}
}
