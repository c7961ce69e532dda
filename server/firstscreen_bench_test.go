package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/creack/pty"

	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/resume"
	"github.com/relay-baton/relay-baton/room"
)

// BigLogEvents is the size of the log the first-screen benchmark reads.
const BigLogEvents = 1_000_000

// realisticLog writes n events to path as the room writes its turns, from
// the event constructors: a question or a command, its prompt preview (the
// prompt inline, 0.2 to 2 KB), the confirmation, the agent run with its
// usage, the agent's answer (its summary, up to 1,000 characters), now and
// then a plan, an execute with its changed files, a status, a chat message
// to the orchestrator with its delivery and reply, a budget line. Sizes
// and choices come from a fixed seed: every run reads the same log.
func realisticLog(tb testing.TB, path string, n int) {
	tb.Helper()
	writeLogFile(tb, path, func(write func(events.Event)) { realisticEvents(n, write) })
}

func realisticEvents(n int, write func(events.Event)) {
	rng := rand.New(rand.NewPCG(35, 1))
	words := strings.Fields("the plan says to add a flag parse it in main and log each step when it is set; tests cover the " +
		"parser the logger and the exit codes `go test ./...` passes **risk**: noise in the output, see [docs](https://example.com/docs)")
	text := func(min, max int) string {
		size := min + rng.IntN(max-min+1)
		var b strings.Builder
		for b.Len() < size {
			if b.Len() > 0 {
				if rng.IntN(12) == 0 {
					b.WriteString("\n\n")
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	written := 0
	session := ""
	put := func(e events.Event) {
		if written >= n {
			return
		}
		if written%5000 == 0 {
			session = events.NewUUID()
		}
		e.SessionID = session
		e.TS = t0.Add(time.Duration(written) * 3 * time.Second).Format(events.TimeFormat)
		write(e)
		written++
	}
	agentsOf := [2]string{"claude", "codex"}
	for written < n {
		agent := agentsOf[rng.IntN(4)/3] // claude three times in four
		cmd := [...]string{"ask", "ask", "ask", "plan", "execute", "review"}[rng.IntN(6)]
		question := text(20, 240)
		if cmd == "ask" {
			put(events.NewWithMeta("", events.RoleUser, question, events.MessageMeta{}))
		} else {
			put(events.NewWithMeta("", events.RoleUser, "/"+cmd+" "+question, events.CommandMeta{Command: cmd}))
		}
		prompt := text(200, 2000)
		preview := events.NewWithMeta("", events.RoleRelayBaton, "preview: /"+cmd+" → "+agent, events.PromptPreviewMeta{
			Agent: agent, Command: cmd, Argv: agent + " -p --output-format stream-json --verbose", Policy: "read-only tools",
			PromptChars: len(prompt), Prompt: prompt,
		})
		put(preview)
		if rng.IntN(10) == 0 { // declined
			put(events.NewWithMeta("", events.RoleUser, "no", events.CommandMeta{Command: cmd, Confirmed: events.Bool(false), PreviewID: preview.ID}))
			put(events.NewWithMeta("", events.Role(agent), agent+" "+cmd+": declined", events.AgentRunMeta{Agent: agent, Command: cmd, Reason: "declined", Cancelled: true, PreviewID: preview.ID}))
			continue
		}
		put(events.NewWithMeta("", events.RoleUser, "yes", events.CommandMeta{Command: cmd, Confirmed: events.Bool(true), PreviewID: preview.ID}))
		ms := int64(2000 + rng.IntN(90000))
		run := events.AgentRunMeta{Agent: agent, Command: cmd, Confirmed: true, Ran: true, ExitCode: events.Int(0), DurationMs: &ms, PreviewID: preview.ID,
			Conversation: events.NewUUID(), ConversationTurns: 1 + rng.IntN(9), InputTokens: int64(2000 + rng.IntN(60000)), OutputTokens: int64(100 + rng.IntN(4000))}
		if agent == "claude" {
			run.CostUSD = float64(rng.IntN(20000)) / 100000
		}
		put(events.NewWithMeta("", events.Role(agent), fmt.Sprintf("%s %s: exit 0 in %ds", agent, cmd, ms/1000), run))
		answer := text(80, 1000)
		switch cmd {
		case "plan":
			put(events.NewWithMeta("", events.RoleRelayBaton, "plan.md written by "+agent, events.PlanMeta{}))
		case "execute":
			put(events.NewWithMeta("", events.Role(agent), "execute by "+agent+": exit 0, 3 changed files; "+answer[:min(len(answer), 300)], events.ExecuteMeta{}))
		default:
			put(events.NewWithMeta("", events.Role(agent), answer, events.MessageMeta{Agent: agent}))
		}
		switch rng.IntN(8) {
		case 0:
			put(events.NewWithMeta("", events.RoleRelayBaton, "agent "+agent+", plan ok, 3 changed files", events.StatusMeta{Agent: agent, ChangedFiles: events.Int(3), Plan: events.Bool(true)}))
		case 1: // a chat message to a running session, delivered, answered
			sid, id := events.NewUUID(), "msg_"+events.NewUUID()
			msg := text(20, 400)
			put(events.NewWithMeta("", events.RoleUser, msg, events.ChatSentMeta{Agent: "orchestrator", Session: sid, MessageID: id, Chars: len(msg)}))
			put(events.NewWithMeta("", events.RoleOrchestrator, "delivered via hook", events.ChatDeliveredMeta{Agent: "orchestrator", Session: sid, MessageID: id, Lane: "hook"}))
			put(events.NewWithMeta("", events.RoleOrchestrator, text(80, 1000), events.ChatReplyMeta{Agent: "orchestrator", Session: sid, MessageID: id, Lane: "hook"}))
		case 2:
			put(events.NewWithMeta("", events.RoleRelayBaton, "budget 0.42 balanced", events.BudgetMeta{}))
		}
	}
}

// viewRoom is main's roomView: the page's context from room.View.
type viewRoom struct{ *room.View }

func (v viewRoom) Context(ctx context.Context) (any, error) { return v.Page(ctx) }

// BenchmarkFirstScreen: a repository whose conversation log holds
// 1,000,000 events of the room's usual mix (built once), and, side by
// side in one run, what each screen reads before its first screen:
//
//   - page/timeline: GET /api/timeline, the newest events the page paints
//     first (its first paint needs nothing else from the log), over HTTP;
//
//   - page/first-render-chromium: from navigation to the newest 200
//     events on screen, in headless Chromium, the real `relay-baton serve`
//     behind it (started just before: it reads the log for the context
//     meanwhile);
//
//   - page/context: the first GET /api/context of a serve just started
//     (room.View reads the log to the end once; later answers read only
//     what was appended);
//
//   - terminal/resume-read: resume.Read with the default recap, what
//     `relay-baton chat --resume` reads before its first screen;
//
//   - terminal/chat-resume and terminal/chat: the real `relay-baton chat
//     --resume` and `relay-baton chat` on a pty, from start to the first
//     prompt.
//
//     go test -run '^$' -bench FirstScreen -benchtime 5x -v ./server
func BenchmarkFirstScreen(b *testing.B) {
	dir := gitRepo(b)
	logPath := filepath.Join(dir, ".ai-session", "conversation.jsonl")
	realisticLog(b, logPath, BigLogEvents)
	if fi, err := os.Stat(logPath); err == nil {
		b.Logf("log: %d events, %.0f MB", BigLogEvents, float64(fi.Size())/1e6)
	}
	v, err := room.OpenView(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	base := serveLoopback(b, viewRoom{v})
	b.Run("page/timeline", func(b *testing.B) {
		medianLoop(b, func() {
			r, err := http.Get(base + "/api/timeline")
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusOK || n < 10000 {
				b.Fatalf("%d, %d bytes", r.StatusCode, n)
			}
		})
	})
	b.Run("page/first-render-chromium", func(b *testing.B) {
		cmd := exec.Command(rbBin, "serve", "--port", "0")
		cmd.Dir = dir
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
		line, _ := bufio.NewReader(out).ReadString('\n')
		_, full := servedAt(b, line)
		ctx := browser(b)
		if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil { // the browser started
			b.Fatal(err)
		}
		medianLoop(b, func() {
			if err := chromedp.Run(ctx, chromedp.Navigate(full), waitText(`#tl-status`, "200 events shown")); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("page/context", func(b *testing.B) {
		medianLoop(b, func() {
			v, err := room.OpenView(dir, "")
			if err != nil {
				b.Fatal(err)
			}
			p, err := v.Page(context.Background())
			if err != nil || p.Costs.Runs == 0 {
				b.Fatal(err, p.Costs.Runs)
			}
		})
	})
	b.Run("terminal/resume-read", func(b *testing.B) {
		medianLoop(b, func() {
			rs, err := resume.Read(logPath, resume.DefaultRecap)
			if err != nil || rs.Events != BigLogEvents {
				b.Fatal(err, rs.Events)
			}
		})
	})
	for _, args := range [][]string{{"chat", "--resume"}, {"chat"}} {
		b.Run("terminal/"+strings.ReplaceAll(strings.Join(args, ""), "--", "-"), func(b *testing.B) {
			medianLoop(b, func() { firstPrompt(b, dir, args...) })
		})
	}
}

// medianLoop runs fn in b.Loop and reports the median of its times
// (ms-median) beside the mean (ns/op).
func medianLoop(b *testing.B, fn func()) {
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		fn()
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "ms-median")
}

// firstPrompt runs relay-baton with args in dir on a pty until its first
// prompt (the active agent's, "claude›"), then leaves with Ctrl-D.
func firstPrompt(b *testing.B, dir string, args ...string) {
	cmd := exec.Command(rbBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { f.Write([]byte{4}); cmd.Wait(); f.Close() }()
	var seen strings.Builder
	buf := make([]byte, 64<<10)
	for !strings.Contains(seen.String(), "›") {
		n, err := f.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			b.Fatalf("relay-baton %v: no prompt: %v\n%s", args, err, seen.String())
		}
	}
}
