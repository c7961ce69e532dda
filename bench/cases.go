package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
)

const benchSession = "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"

func (b *bench) workspace(name string) (string, *conversation.Session, error) {
	ws := filepath.Join(b.tmp, name)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", nil, err
	}
	s, err := conversation.OpenSession(ws, benchSession)
	if err != nil {
		return "", nil, err
	}
	return ws, s, s.Ensure()
}

// hookStop: the Stop hook with an empty inbox, as a whole process fed a real
// payload, against a bash + python3 hook doing the same checks.
func (b *bench) hookStop() error {
	ws, _, err := b.workspace("hook")
	if err != nil {
		return err
	}
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/root/.claude/projects/-x/%s.jsonl","cwd":%q,"prompt_id":"p1","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done.","background_tasks":[]}`, benchSession, benchSession, ws)
	env := append(os.Environ(), "CLAUDE_PROJECT_DIR="+ws)
	n := 200
	if *quick {
		n = 60
	}
	empty, err := b.emptyGoProgram()
	if err != nil {
		return err
	}
	var ours, viaShell, ref, floor []time.Duration
	for i := 0; i < n; i++ { // interleaved, so all four see the same machine state
		d, _, err := runOnce(strings.NewReader(payload), env, ws, b.bin, "hook", "stop")
		if err != nil {
			return err
		}
		ours = append(ours, d)
		// A shell-form hook: what Claude Code starts for it.
		d, _, err = runOnce(strings.NewReader(payload), env, ws, "/bin/sh", "-c", b.bin+" hook stop")
		if err != nil {
			return err
		}
		viaShell = append(viaShell, d)
		d, _, err = runOnce(strings.NewReader(payload), env, ws, filepath.Join(b.ref, "stop-hook.sh"))
		if err != nil {
			return err
		}
		ref = append(ref, d)
		d, _, err = runOnce(strings.NewReader(payload), env, ws, empty)
		if err != nil {
			return err
		}
		floor = append(floor, d)
	}
	o, r, f := median(ours), median(ref), median(floor)
	ratio := float64(o) / float64(r)
	add(row{"`hook stop`, empty inbox (process, median)", ms(o), ms(r) + " (bash + python3)", fmt.Sprintf("%.3f×", ratio),
		"≤ 5 ms and ≤ 0.05×", verdict(o <= 5*time.Millisecond && ratio <= 0.05)})
	fratio := float64(o) / float64(f)
	add(row{"`hook stop`, empty inbox, exec-form hook, against an empty Go program (median)", ms(o), ms(f) + " (func main() {})", fmt.Sprintf("%.2f×", fratio),
		"≤ 2.5×", verdict(fratio <= 2.5)})
	s := median(viaShell)
	add(row{"`hook stop`, empty inbox, shell-form hook (`sh -c`), against an empty Go program (median)", ms(s), ms(f) + " (func main() {})", fmt.Sprintf("%.2f×", float64(s)/float64(f)), "", ""})
	return nil
}

// emptyGoProgram builds `package main; func main() {}` with the same Go:
// the floor of any Go process's start on this machine.
func (b *bench) emptyGoProgram() (string, error) {
	dir := filepath.Join(b.tmp, "empty")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "empty")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the empty program: %w: %s", err, out)
	}
	return bin, nil
}

// idleWait: enqueue -> claimed and printed by `relay-baton wait`, against a
// 1 s polling loop.
func (b *bench) idleWait() error {
	ws, s, err := b.workspace("idle")
	if err != nil {
		return err
	}
	n := 200
	if *quick {
		n = 50
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, "wait", "--workspace", ws, "--session", benchSession)
	lines, err := lineReader(ctx, cmd)
	if err != nil {
		return err
	}
	defer cmd.Wait()
	time.Sleep(300 * time.Millisecond) // let it arm its watch
	ours, err := latencies(s, lines, n, 20*time.Millisecond)
	if err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	cancel()

	// Reference: the prototype's 1 s polling loop; fewer samples, each costs ~0.5 s.
	ws2, s2, err := b.workspace("idle-ref")
	if err != nil {
		return err
	}
	_ = ws2
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	ref := exec.CommandContext(ctx2, filepath.Join(b.ref, "poll-wait.sh"), s2.Dir(), "1")
	lines2, err := lineReader(ctx2, ref)
	if err != nil {
		return err
	}
	defer ref.Wait()
	m := 20
	if *quick {
		m = 8
	}
	refs, err := latencies(s2, lines2, m, 137*time.Millisecond) // an odd gap, so sends fall at varied points of the poll cycle
	if err != nil {
		return fmt.Errorf("poll reference: %w", err)
	}
	cancel2()
	_ = ws
	add(row{fmt.Sprintf("idle lane `wait`: enqueue → printed, p50 (n=%d)", n), ms(median(ours)), ms(median(refs)) + fmt.Sprintf(" (1 s poll, n=%d)", m),
		fmt.Sprintf("%.3f×", float64(median(ours))/float64(median(refs))), "p50 ≤ 20 ms", verdict(median(ours) <= 20*time.Millisecond)})
	add(row{"idle lane `wait`: enqueue → printed, p99", ms(pct(ours, 99)), ms(pct(refs, 99)), fmt.Sprintf("%.3f×", float64(pct(ours, 99))/float64(pct(refs, 99))),
		"p99 ≤ 50 ms", verdict(pct(ours, 99) <= 50*time.Millisecond)})
	return nil
}

// latencies enqueues n messages one at a time and measures enqueue -> line.
// Only lines carrying the message's text count (a waiter may print more).
// The gap between messages varies, so sends fall at varied points of a
// polling reference's cycle.
func latencies(s *conversation.Session, lines <-chan stamped, n int, gap time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("bench message %d", i)
		start := time.Now()
		if _, err := s.Enqueue("bench", text); err != nil {
			return nil, err
		}
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return nil, fmt.Errorf("the waiter exited after %d messages", i)
				}
				if strings.Contains(l.line, text) {
					out = append(out, l.at.Sub(start))
					break wait
				}
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("message %d not printed within 10 s", i)
			}
		}
		time.Sleep(gap * time.Duration(1+i%7))
	}
	return out, nil
}

// rewake: the asyncRewake waiter (`hook wait`), armed, then a message:
// enqueue -> the waiter has exited with code 2 and the framed text.
func (b *bench) rewake() error {
	ws, s, err := b.workspace("rewake")
	if err != nil {
		return err
	}
	payload := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, benchSession, ws)
	n := 200
	if *quick {
		n = 30
	}
	var lat []time.Duration
	for i := 0; i < n; i++ {
		cmd := exec.Command(b.bin, "hook", "wait")
		cmd.Stdin = strings.NewReader(payload)
		cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+ws)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		deadline := time.Now().Add(5 * time.Second)
		for !s.Waiting() && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // armed: its watch is set after the lock
		start := time.Now()
		if _, err := s.Enqueue("bench", fmt.Sprintf("wake %d", i)); err != nil {
			return err
		}
		err := cmd.Wait()
		el := time.Since(start)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), fmt.Sprintf("wake %d", i)) {
			return fmt.Errorf("hook wait: want exit 2 with the message, got %w: %q", err, stderr.String())
		}
		lat = append(lat, el)
	}
	add(row{fmt.Sprintf("rewake waiter `hook wait`: enqueue → exit 2, p50 (n=%d)", n), ms(median(lat)), "(1 s poll: see above)", "", "p50 ≤ 20 ms", verdict(median(lat) <= 20*time.Millisecond)})
	add(row{"rewake waiter `hook wait`: p99", ms(pct(lat, 99)), "", "", "p99 ≤ 50 ms", verdict(pct(lat, 99) <= 50*time.Millisecond)})
	return nil
}

// transcriptShapes are the two kinds of transcript the scan is measured
// on: "corpus", the shared corpus of long sessions (progress lines and
// large tool results) with the recorded 2.1.328 chat, and "2.1.328 today",
// the sessions recorded from the real CLI this project pins (a stream-json
// session and a TUI session: large attachment lines whose type follows the
// nested attachment, api-request-shape / -blob, queue operations; see
// agents/transcript_record_test.go).
var transcriptShapes = []struct {
	name  string
	globs []string
}{
	{"2.1.328 today", []string{"transcript/testdata/claude-2.1.328-today.jsonl"}},
	{"corpus", []string{
		"transcript/testdata/claude-2.1.328-chat.jsonl",
		"testdata/transcripts/*.jsonl",
		"testdata/corpus/marot-spotter/test/fixtures/transcripts/*.jsonl",
	}},
}

// transcriptLines returns the JSON lines of the files globs match.
func transcriptLines(globs []string) ([][]byte, error) {
	var lines [][]byte
	for _, pat := range globs {
		files, _ := filepath.Glob(pat)
		if len(files) == 0 && !strings.Contains(pat, "*") {
			return nil, fmt.Errorf("%s not found (run from the repo root)", pat)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			for _, l := range bytes.Split(data, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 && json.Valid(l) {
					lines = append(lines, append([]byte(nil), l...))
				}
			}
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no transcript lines in %v (run from the repo root)", globs)
	}
	return lines, nil
}

func makeTranscript(path string, size int64, lines [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := 0; n < size; i++ {
		l := lines[i%len(lines)]
		w.Write(l)
		w.WriteByte('\n')
		n += int64(len(l) + 1)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// scan: `tail --from-start --no-follow --json` over big transcripts, against
// jq selecting the same assistant blocks.
func (b *bench) scan() error {
	if _, err := exec.LookPath("jq"); err != nil {
		return fmt.Errorf("jq is needed for the reference (apt-get install jq)")
	}
	sizes := []int64{200 << 20, 1 << 30}
	if *quick {
		sizes = []int64{50 << 20}
	}
	for _, shape := range transcriptShapes {
		lines, err := transcriptLines(shape.globs)
		if err != nil {
			return err
		}
		for _, size := range sizes {
			if err := b.scanOne(shape.name, lines, size); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *bench) scanOne(shape string, lines [][]byte, size int64) error {
	ws, s, err := b.workspace(fmt.Sprintf("scan-%d", size>>20))
	if err != nil {
		return err
	}
	tp := filepath.Join(ws, benchSession+".jsonl")
	if err := makeTranscript(tp, size, lines); err != nil {
		return err
	}
	if err := s.Register(conversation.Registration{SessionID: benchSession, TranscriptPath: tp, Cwd: ws}); err != nil {
		return err
	}
	oursArgs := []string{"tail", "--workspace", ws, "--session", benchSession, "--from-start", "--no-follow", "--json"}
	jqArgs := []string{"-c", `select(.type == "assistant" and (.isSidechain | not)) | .message.content[]?`, tp}
	var ours, refs, oursCPU, refsCPU []time.Duration
	for i := 0; i < 3; i++ {
		d, _, err := runOnce(nil, nil, ws, b.bin, oursArgs...)
		if err != nil {
			return err
		}
		ours, oursCPU = append(ours, d), append(oursCPU, lastCPU)
		d, _, err = runOnce(nil, nil, ws, "jq", jqArgs...)
		if err != nil {
			return err
		}
		refs, refsCPU = append(refs, d), append(refsCPU, lastCPU)
	}
	oursRSS, err := peakRSS(ws, b.bin, oursArgs...)
	if err != nil {
		return err
	}
	refRSS, err := peakRSS(ws, "jq", jqArgs...)
	if err != nil {
		return err
	}
	o, r := median(ours), median(refs)
	mbps := func(d time.Duration) string { return fmt.Sprintf("%.0f MB/s", float64(size)/1e6/d.Seconds()) }
	label := fmt.Sprintf("%d MB", size>>20)
	if size >= 1<<30 {
		label = "1 GB"
	}
	add(row{"transcript scan " + label + ", " + shape + " (`tail --from-start --no-follow`)", fmt.Sprintf("%s, %s (CPU %s)", ms(o), mbps(o), ms(median(oursCPU))), fmt.Sprintf("%s, %s (jq; CPU %s)", ms(r), mbps(r), ms(median(refsCPU))),
		speedup(float64(r) / float64(o)), "≥ 10× jq", verdict(float64(r)/float64(o) >= 10)})
	add(row{"transcript scan " + label + ", " + shape + ": peak RSS", mib(oursRSS), mib(refRSS) + " (jq)", "", "≤ 32 MiB at 1 GB", verdict(size < 1<<30 || oursRSS <= 32<<20)})
	os.Remove(tp)
	return nil
}

// follow: append a line to a followed transcript -> the activity is printed.
func (b *bench) follow() error {
	ws, s, err := b.workspace("follow")
	if err != nil {
		return err
	}
	tp := filepath.Join(ws, benchSession+".jsonl")
	if err := os.WriteFile(tp, nil, 0o600); err != nil {
		return err
	}
	if err := s.Register(conversation.Registration{SessionID: benchSession, TranscriptPath: tp, Cwd: ws}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, "tail", "--workspace", ws, "--session", benchSession, "--json")
	lines, err := lineReader(ctx, cmd)
	if err != nil {
		return err
	}
	defer cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	f, err := os.OpenFile(tp, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	n := 200
	if *quick {
		n = 50
	}
	var lat []time.Duration
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"assistant","isSidechain":false,"uuid":"u%d","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":"reply %d"}],"stop_reason":null}}`+"\n", i, i, i)
		start := time.Now()
		if _, err := f.WriteString(line); err != nil {
			return err
		}
		select {
		case l := <-lines:
			lat = append(lat, l.at.Sub(start))
		case <-time.After(5 * time.Second):
			return fmt.Errorf("line %d not followed within 5 s", i)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // before the deferred cmd.Wait: the tail follows until killed
	add(row{fmt.Sprintf("transcript follow: append → activity printed, p50 (n=%d)", n), ms(median(lat)), "", "", "p50 ≤ 10 ms", verdict(median(lat) <= 10*time.Millisecond)})
	return nil
}

// claim: throughput of 8 concurrent claimers (across the three lanes)
// against one claimer. Every claimed id is checked against the enqueued
// ones: the verdict is 0 lost and 0 doubled, counted, not assumed.
func (b *bench) claim() error {
	claimLost, claimDoubled := 0, 0
	n := 10000
	if *quick {
		n = 2000
	}
	measure := func(name string, claimers int) (float64, error) {
		_, s, err := b.workspace(name)
		if err != nil {
			return 0, err
		}
		sent := make(map[string]bool, n)
		for i := 0; i < n; i++ {
			m, err := s.Enqueue("bench", fmt.Sprintf("m%d", i))
			if err != nil {
				return 0, err
			}
			sent[m.ID] = true
		}
		if len(sent) != n {
			return 0, fmt.Errorf("Enqueue returned %d distinct ids for %d messages", len(sent), n)
		}
		lanes := []conversation.Lane{conversation.LaneHook, conversation.LaneRewake, conversation.LaneMonitor}
		got := make([][]string, claimers)
		errs := make([]error, claimers)
		var wg sync.WaitGroup
		start := time.Now()
		for c := 0; c < claimers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					res, err := s.Claim(lanes[c%len(lanes)])
					if err != nil {
						errs[c] = err
						return
					}
					if !res.OK {
						return
					}
					got[c] = append(got[c], res.Message.ID)
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		seen := make(map[string]int, n)
		for _, ids := range got {
			for _, id := range ids {
				seen[id]++
			}
		}
		var lost, doubled, unknown int
		for id := range sent {
			if seen[id] == 0 {
				lost++
			}
		}
		for id, k := range seen {
			if k > 1 {
				doubled += k - 1
			}
			if !sent[id] {
				unknown++
			}
		}
		claimLost += lost
		claimDoubled += doubled + unknown
		if lost+doubled+unknown > 0 {
			fmt.Fprintf(os.Stderr, "  %d claimers: %d lost, %d doubled, %d unknown of %d\n", claimers, lost, doubled, unknown, n)
		}
		return float64(n) / el.Seconds(), nil
	}
	one, err := measure("claim1", 1)
	if err != nil {
		return err
	}
	eight, err := measure("claim8", 8)
	if err != nil {
		return err
	}
	add(row{fmt.Sprintf("claim throughput, 8 concurrent claimers (%d msgs, ids checked)", n), fmt.Sprintf("%.0f msg/s; %d lost, %d doubled", eight, claimLost, claimDoubled), fmt.Sprintf("%.0f msg/s (1 claimer)", one), fmt.Sprintf("%.2f×", eight/one), "0 lost, 0 doubled", verdict(claimLost == 0 && claimDoubled == 0)})
	return nil
}

// replay: 1,000,000 events, text and --json, against jq rendering the same lines.
func (b *bench) replay() error {
	n := 1_000_000
	if *quick {
		n = 200_000
	}
	p := filepath.Join(b.tmp, "conversation.jsonl")
	l, err := events.OpenLog(p)
	if err != nil {
		return err
	}
	roles := []events.Role{events.RoleUser, events.RoleClaude, events.RoleCodex, events.RoleRelayBaton}
	kinds := []events.Kind{events.KindCommand, events.KindPromptPreview, events.KindAgentRun, events.KindPlan, events.KindMessage}
	for i := 0; i < n; i++ {
		e := events.New("bench-session", roles[i%len(roles)], kinds[i%len(kinds)], fmt.Sprintf("event number %d: a short summary of what happened", i))
		if i%3 == 0 {
			e.Meta = events.MetaJSON(`{"agent":"codex","exitCode":0}`)
		}
		if err := l.Append(e); err != nil {
			return err
		}
	}
	l.Close()
	var text, js, ref []time.Duration
	for i := 0; i < 3; i++ {
		d, _, err := runOnce(nil, nil, b.tmp, b.bin, "replay", "--file", p)
		if err != nil {
			return err
		}
		text = append(text, d)
		d, _, err = runOnce(nil, nil, b.tmp, b.bin, "replay", "--file", p, "--json")
		if err != nil {
			return err
		}
		js = append(js, d)
		d, _, err = runOnce(nil, nil, b.tmp, "jq", "-r", `"\(.ts) \(.role) \(.kind): \(.text)"`, p)
		if err != nil {
			return err
		}
		ref = append(ref, d)
	}
	rssSmall, err := peakRSS(b.tmp, b.bin, "replay", "--file", p, "--limit", "20")
	if err != nil {
		return err
	}
	label := fmt.Sprintf("%d events", n)
	add(row{"replay " + label + ", text", ms(median(text)), ms(median(ref)) + " (jq)", speedup(float64(median(ref)) / float64(median(text))), "< 1.5 s", verdict(median(text) < 1500*time.Millisecond)})
	add(row{"replay " + label + ", --json", ms(median(js)), "", "", "< 1.5 s", verdict(median(js) < 1500*time.Millisecond)})
	add(row{"replay " + label + ", --limit 20: peak RSS", mib(rssSmall), "", "", "flat in log size", ""})
	return nil
}

// start: REPL start to first prompt through a pseudo-terminal, against the
// same binary's --version (process start alone).
func (b *bench) start() error {
	repo := filepath.Join(b.tmp, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		return err
	}
	n := 30
	var ours, base []time.Duration
	for i := 0; i < n; i++ {
		d, err := ptyUntil(repo, "› ", b.bin, "chat", "--path", repo)
		if err != nil {
			return err
		}
		ours = append(ours, d)
		d, _, err = runOnce(nil, nil, repo, b.bin, "--version")
		if err != nil {
			return err
		}
		base = append(base, d)
	}
	add(row{"REPL start → first prompt (pty, median)", ms(median(ours)), ms(median(base)) + " (`--version`)", fmt.Sprintf("%.1f×", float64(median(ours))/float64(median(base))), "< 30 ms", verdict(median(ours) < 30*time.Millisecond)})
	return nil
}

func ptyUntil(dir, marker string, name string, args ...string) (time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	start := time.Now()
	f, err := pty.Start(cmd)
	if err != nil {
		return 0, err
	}
	defer func() {
		f.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var buf []byte
	tmp := make([]byte, 4096)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := f.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if bytes.Contains(buf, []byte(marker)) {
			return time.Since(start), nil
		}
		if err != nil {
			if err == io.EOF {
				break
			}
			return 0, fmt.Errorf("pty read: %w (output %q)", err, buf)
		}
	}
	return 0, fmt.Errorf("no prompt %q within 10 s; output %q", marker, buf)
}

// speedup words a throughput ratio (reference time / our time).
func speedup(x float64) string {
	if x >= 1 {
		return fmt.Sprintf("%.1f× faster", x)
	}
	return fmt.Sprintf("%.2f× (slower)", x)
}

// noop: a no-op turn (/note) in the room, from the line written to the
// next prompt's status line printed, in a repository with 100,000
// untracked files, against the same turn in a small repository and
// against the one git walk each prompt used to wait for.
func (b *bench) noop() error {
	n := 100_000
	turns := 200
	if *quick {
		turns = 50
	}
	big := filepath.Join(b.tmp, "noop-big")
	small := filepath.Join(b.tmp, "noop-small")
	for _, r := range []struct {
		dir   string
		files int
	}{{big, n}, {small, 100}} {
		if err := makeRepo(r.dir, r.files); err != nil {
			return err
		}
	}
	bigTurns, err := b.noopTurns(big, turns)
	if err != nil {
		return err
	}
	smallTurns, err := b.noopTurns(small, turns)
	if err != nil {
		return err
	}
	var walk []time.Duration
	for i := 0; i < 5; i++ {
		d, _, err := runOnce(nil, nil, big, "git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
		if err != nil {
			return err
		}
		walk = append(walk, d)
	}
	o, r := median(bigTurns), median(smallTurns)
	add(row{fmt.Sprintf("no-op turn (`/note`), 100,000 untracked files, median (n=%d)", turns), ms(o), ms(r) + " (100 untracked files)", fmt.Sprintf("%.2f×", float64(o)/float64(r)),
		"≤ 50 ms", verdict(o <= 50*time.Millisecond)})
	add(row{"no-op turn, 100,000 untracked files, p99", ms(pct(bigTurns, 99)), ms(median(walk)) + " (`git status -uall` alone, median)", "", "", ""})
	return nil
}

// makeRepo makes a git repository with one commit and files untracked
// files in 100 folders.
func makeRepo(dir string, files int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "."}, {"-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w %s", args, err, out)
		}
	}
	for d := 0; d < 100; d++ {
		sub := filepath.Join(dir, "gen", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := 0; f < files/100; f++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", f)), []byte("generated\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// noopTurns runs `relay-baton chat` in dir with its stdin a pipe and
// times turns: "/note" written → the status line of the next prompt read.
func (b *bench) noopTurns(dir string, turns int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, "chat", "--path", dir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	lines, err := lineReader(ctx, cmd)
	if err != nil {
		return nil, err
	}
	defer cmd.Wait()
	next := func(d time.Duration) error {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return fmt.Errorf("the room exited")
				}
				if strings.HasPrefix(l.line, "ctx ") {
					return nil
				}
			case <-time.After(d):
				return fmt.Errorf("no status line within %v", d)
			}
		}
	}
	if err := next(60 * time.Second); err != nil { // the first prompt: the first walk
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < turns; i++ {
		start := time.Now()
		if _, err := fmt.Fprintf(in, "/note bench %d\n", i); err != nil {
			return nil, err
		}
		if err := next(30 * time.Second); err != nil {
			return nil, fmt.Errorf("turn %d: %w", i, err)
		}
		out = append(out, time.Since(start))
		time.Sleep(5 * time.Millisecond)
	}
	in.Close()
	return out, nil
}
