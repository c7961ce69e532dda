//go:build unix

package room

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/transcript"
	"github.com/relay-baton/relay-baton/workspace"
)

// hooklessRun runs the built relay-baton in dir as relayRun does, with
// RELAY_BATON_CLAUDE pointing at the pinned claude (whose `agents --json`
// lists the sessions); it returns the output whatever the exit code.
func hooklessRun(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	bin, _ := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), max(2*time.Minute, ptyGuard)) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	home, _ := agenttest.EnvValue(env, "HOME")
	claude, _ := agenttest.EnvValue(env, agents.ClaudeBinEnv)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "HOME=" + home, agents.ClaudeBinEnv + "=" + claude}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestE2EHooklessTUI: the real interactive Claude Code in tmux with NO
// relay-baton hook installed. Claude Code's registry makes it a target;
// `send --follow` reaches it through its messaging socket and gets its
// answer; the model's request carries the frame the preview shows, byte
// for byte; the room chats with it (/agent orchestrator); a permission
// prompt shows as waiting for its user; an ended session disappears.
func TestE2EHooklessTUI(t *testing.T) {
	const (
		idleQ, idleA = "HOOKLESS-Q1: anything left?", "HOOKLESS-A1: nothing is left."
		roomQ, roomA = "HOOKLESS-ROOM-Q2: status from the room?", "HOOKLESS-ROOM-A2: the room's answer."
		permQ        = "HOOKLESS-PERM: write the file"
	)
	a := agenttest.NewAnthropic(t)
	a.WhenTail("HOOKLESS-Q1", agenttest.Reply(agenttest.Text(idleA)))
	a.WhenTail("HOOKLESS-ROOM-Q2", agenttest.Reply(agenttest.Text(roomA)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	a.When("HOOKLESS-PERM", agenttest.Reply(agenttest.ToolUse("Write", map[string]any{"file_path": filepath.Join(dir, "perm.txt"), "content": "x\n"})))
	env := append(messagingEnv(t, a), agents.ClaudeBinEnv+"="+agenttest.ClaudeBin(t))
	u := startTUI(t, dir, env)

	// A target with no hook: listed by Claude Code, reached by its socket.
	var out string
	eventually(t, time.Minute, "the hookless session in targets", func() bool {
		out, _ = hooklessRun(t, dir, env, "targets")
		return strings.Contains(out, "idle, socket: at once")
	})
	if _, err := os.Stat(filepath.Join(dir, workspace.ChatDir)); err == nil {
		t.Fatalf("a chat folder exists before any send (hooks?)")
	}
	if strings.Contains(out, "hook install") {
		t.Fatalf("targets asks for hooks:\n%s", out)
	}
	t.Logf("targets:\n%s", out)
	// doctor says which lanes reach it, and why not the others.
	out, _ = hooklessRun(t, dir, env, "doctor")
	for _, want := range []string{"socket (Claude Code lists it; its listener is checked at each post)", "no Stop hook or rewake: it started without relay-baton's hooks"} {
		if !strings.Contains(out, want) {
			t.Fatalf("doctor lacks %q:\n%s", want, out)
		}
	}

	sent := time.Now()
	out, err := hooklessRun(t, dir, env, "send", "--lead", "--follow", idleQ)
	if err != nil {
		t.Fatalf("send --follow: %v\n%s", err, out)
	}
	id := sentID(t, out)
	for _, want := range []string{"delivered via socket at ", idleA, "✓ end of turn"} {
		if !strings.Contains(out, want) {
			t.Fatalf("send --follow to the hookless session lacks %q:\n%s", want, out)
		}
	}
	req, ok := requestWith(a, "chat message "+id+" ")
	if !ok {
		t.Fatal("the message never reached the model")
	}
	s := chatSession(t, dir)
	st, err := s.State(id)
	if err != nil || st.Delivered == nil {
		t.Fatalf("state %+v %v", st, err)
	}
	// The frame the preview shows, filled, is what the model received.
	frame := prompts.FillFrame(conversation.Frame(conversation.Message{From: st.Delivered.From, Text: idleQ}), id, st.Delivered.CreatedAt)
	tail := agenttest.TailText(req)
	if !strings.Contains(tail, frame) {
		t.Fatalf("the model's request does not carry the previewed frame.\nframe:\n%s\nrequest:\n%s", frame, tail)
	}
	t.Logf("idle, hookless: send → the model's request %s; frame %d chars; the request's text around it (Claude Code's own):\n%s", req.At.Sub(sent).Round(time.Millisecond), len(frame), tail)
	if strings.Contains(tail, "typed by your user") && !strings.Contains(tail, "not typed by your user") {
		t.Fatalf("the request says typed by your user:\n%s", tail)
	}
	u.waitScreen(t, 10*time.Second, idleA)

	// The room chats with it.
	home, _ := agenttest.EnvValue(env, "HOME")
	p := startBinary(t, dir, "NO_COLOR=1", "HOME="+home, agents.ClaudeBinEnv+"="+agenttest.ClaudeBin(t))
	sendFromRoom(t, p, s.ID, roomQ, "idle; delivers: socket, at once")
	p.untilWithin(t, "delivered via socket at ", 60*time.Second)
	p.untilWithin(t, "[orchestrator] "+roomA, 60*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 60*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)

	// A permission prompt: waiting for its user.
	u.typeLine(t, permQ)
	eventually(t, time.Minute, "the permission prompt in targets", func() bool {
		out, _ = hooklessRun(t, dir, env, "targets")
		return strings.Contains(out, "waiting for its user (permission prompt)")
	})
	u.run(t, "send-keys", "-t", "tui", "Escape")

	// Ended: the TUI exits; the session is no target any more.
	u.run(t, "kill-server")
	eventually(t, time.Minute, "the ended session gone from targets", func() bool {
		out, _ = hooklessRun(t, dir, env, "targets")
		return !strings.Contains(out, s.ID)
	})
	t.Logf("after the end:\n%s", out)
}

// TestE2EHooklessPlainSendsInARow: two plain sends (no --follow) to the
// real TUI with no relay-baton hook, the second while the first's answer
// still streams. The second waits for the first's turn to end (one message
// per turn), then posts itself: send stays, since no Stop hook would post
// it. Each reaches the model once, in its own request after the first's
// answer; the first's reply is stored from the transcript.
func TestE2EHooklessPlainSendsInARow(t *testing.T) {
	const (
		q1, a1 = "ROW-Q1: first?", "ROW-A1: the first, slowly."
		q2, a2 = "ROW-Q2: second?", "ROW-A2: the second answer."
	)
	a := agenttest.NewAnthropic(t)
	slow := agenttest.Reply(agenttest.Text(a1))
	slow.Delay = 300 * time.Millisecond // the first turn runs while the second is sent
	a.WhenTail("ROW-Q1", slow)
	a.WhenTail("ROW-Q2", agenttest.Reply(agenttest.Text(a2)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	env := append(messagingEnv(t, a), agents.ClaudeBinEnv+"="+agenttest.ClaudeBin(t))
	startTUI(t, dir, env)
	eventually(t, time.Minute, "the hookless session in targets", func() bool {
		out, _ := hooklessRun(t, dir, env, "targets")
		return strings.Contains(out, "idle, socket: at once")
	})
	out, err := hooklessRun(t, dir, env, "send", "--lead", q1)
	if err != nil {
		t.Fatalf("send: %v\n%s", err, out)
	}
	id1 := sentID(t, out)
	eventually(t, time.Minute, "the first message's request", func() bool { _, ok := requestWith(a, "chat message "+id1+" "); return ok })
	out, err = hooklessRun(t, dir, env, "send", "--lead", q2)
	if err != nil {
		t.Fatalf("second send: %v\n%s", err, out)
	}
	id2 := sentID(t, out)
	for _, want := range []string{"waits until message " + id1 + " is answered", "send stays to post it", "posted " + id2 + " via socket"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the second send lacks %q:\n%s", want, out)
		}
	}
	eventually(t, time.Minute, "the second message's request", func() bool { _, ok := requestWith(a, "chat message "+id2+" "); return ok })
	var first, second = -1, -1
	for i, r := range a.Agent() {
		switch last := agenttest.LastUserText(r); {
		case strings.Contains(last, "chat message "+id1+" "):
			if first >= 0 || strings.Contains(last, "chat message "+id2+" ") {
				t.Fatalf("request %d: message %s not in a turn of its own:\n%s", i, id1, last)
			}
			first = i
		case strings.Contains(last, "chat message "+id2+" "):
			if second >= 0 {
				t.Fatalf("message %s reached the model twice (requests %d and %d)", id2, second, i)
			}
			second = i
			if !strings.Contains(string(r.Body), a1) {
				t.Fatalf("message %s reached the model before the first answer was in its history:\n%s", id2, r.Body)
			}
		}
	}
	if first < 0 || second < first {
		t.Fatalf("requests: first %d, second %d", first, second)
	}
	s := chatSession(t, dir)
	if text, ok := s.Reply(id1); !ok || !strings.Contains(text, a1) {
		t.Fatalf("reply of %s = %q, %v: want the transcript's text", id1, text, ok)
	}
}

// TestE2EHooklessAPIDownShowsRetry: the session's API answers 500, and
// Claude Code retries for minutes with nothing in its transcript but one
// api-request line per attempt. A follower of the message (send --follow,
// the room, the page) shows that the request is being retried, not
// "thinking" alone.
func TestE2EHooklessAPIDownShowsRetry(t *testing.T) {
	a := agenttest.NewAnthropic(t)
	a.When("APIDOWN-Q", agenttest.Step{Status: 500, Message: "overloaded"})
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	sid := hooklessInProcess(t, dir, a)
	r, err := conversation.Send(dir, sid, "test", "APIDOWN-Q: hello?")
	if err != nil || r.SocketErr != nil {
		t.Fatal(err, r.SocketErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	retry := make(chan events.Activity, 1)
	go conversation.Watch(ctx, r, conversation.WatchOptions{Poll: 100 * time.Millisecond}, func(u conversation.Update) {
		if u.Kind == conversation.UpdActivity && u.Activity.Kind == events.ActError && u.Activity.Detail == transcript.RetryDetail {
			select {
			case retry <- u.Activity:
			default:
			}
			cancel()
		}
	})
	var act events.Activity
	select {
	case act = <-retry:
	case <-ctx.Done():
		t.Fatalf("no retry shown within the hang guard; %d requests reached the mock", len(a.Agent()))
	}
	var ss strings.Builder
	out := render.NewStream(&ss, false, false)
	out.Activity(events.RoleOrchestrator, act)
	out.Close()
	if !strings.Contains(ss.String(), "error: the session's request to the model failed and Claude Code is retrying it") {
		t.Fatalf("the terminal shows %q", ss.String())
	}
}

// TestE2EHooklessWithHooks: with relay-baton's hooks installed as well,
// the session Claude Code lists and the one its hooks registered are one
// row, and each message reaches the model once.
func TestE2EHooklessWithHooks(t *testing.T) {
	const (
		q1, a1 = "BOTH-Q1: first?", "BOTH-A1: the first answer."
		q2, a2 = "BOTH-Q2: second?", "BOTH-A2: the second answer."
	)
	a := agenttest.NewAnthropic(t)
	a.WhenTail("BOTH-Q1", agenttest.Reply(agenttest.Text(a1)))
	a.WhenTail("BOTH-Q2", agenttest.Reply(agenttest.Text(a2)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := append(messagingEnv(t, a), agents.ClaudeBinEnv+"="+agenttest.ClaudeBin(t))
	startTUI(t, dir, env)
	s := chatSession(t, dir)
	var out string
	var ts []conversation.Target
	eventually(t, time.Minute, "the session in targets, listed and hooked", func() bool {
		out, _ = hooklessRun(t, dir, env, "targets", "--json")
		ts = nil
		return json.Unmarshal([]byte(out), &ts) == nil && len(ts) > 0 && ts[0].Listed && ts[0].Socket
	})
	if len(ts) != 1 || ts[0].SessionID != s.ID {
		t.Fatalf("targets for session %s:\n%s", s.ID, out)
	}
	for _, qa := range [][2]string{{q1, a1}, {q2, a2}} {
		out, err := hooklessRun(t, dir, env, "send", "--lead", "--follow", qa[0])
		if err != nil || !strings.Contains(out, qa[1]) || !strings.Contains(out, "✓ end of turn") {
			t.Fatalf("send --follow %q: %v\n%s", qa[0], err, out)
		}
		id := sentID(t, out)
		// Once: one request first carries it (every later request of the
		// conversation repeats the history).
		first := -1
		for i, r := range a.Agent() {
			if strings.Contains(agenttest.LastUserText(r), "chat message "+id+" ") {
				if first >= 0 {
					t.Fatalf("message %s reached the model in requests %d and %d", id, first, i)
				}
				first = i
			}
		}
		if first < 0 {
			t.Fatalf("message %s never reached the model as a new turn", id)
		}
		tr := conversation.LocateTranscript(s)
		b, _ := os.ReadFile(tr)
		if n := strings.Count(string(b), `"content":"Another Claude session sent a message:\n[relay-baton chat message `+id+" "); n > 1 {
			t.Fatalf("message %s delivered %d times (transcript)", id, n)
		}
	}
}

// hooklessInProcess starts the real TUI in dir with no relay-baton hook,
// points this process at its HOME and claude (Claude Code's list and
// transcripts are the TUI's), and waits until the session is a target
// listed by Claude Code with its socket; it returns the session id.
func hooklessInProcess(t testing.TB, dir string, a *agenttest.Anthropic) string {
	t.Helper()
	bin := agenttest.ClaudeBin(t)
	env := append(messagingEnv(t, a), agents.ClaudeBinEnv+"="+bin)
	startTUI(t, dir, env)
	home, _ := agenttest.EnvValue(env, "HOME")
	t.Setenv("HOME", home)
	if old, ok := os.LookupEnv("CLAUDE_CONFIG_DIR"); ok { // unset, not empty: claude would take "" as a folder
		os.Unsetenv("CLAUDE_CONFIG_DIR")
		t.Cleanup(func() { os.Setenv("CLAUDE_CONFIG_DIR", old) })
	}
	t.Setenv(agents.ClaudeBinEnv, bin)
	var sid string
	var ts []conversation.Target
	t.Cleanup(func() {
		if sid == "" {
			l, err := claudecode.Registry(context.Background())
			t.Logf("Claude Code's list: %+v %v; targets %+v", l, err, ts)
		}
	})
	eventually(t, time.Minute, "the session in Claude Code's list", func() bool {
		claudecode.ForgetRegistry()
		ts, _ = conversation.ListTargets(dir)
		if len(ts) == 1 && ts[0].Listed && ts[0].Socket {
			sid = ts[0].SessionID
		}
		return sid != ""
	})
	return sid
}

// BenchmarkHooklessIdleDelivery is BenchmarkSocketIdleDelivery with no
// relay-baton hook installed: each send finds the session in Claude Code's
// list (`claude agents --json`, cached 3 s) and posts to its socket after
// the peer check. It reports p50 and p95 of send → the model's request
// (go test ./room -run '^$' -bench 'HooklessIdle|SocketIdle' -benchtime 30x).
func BenchmarkHooklessIdleDelivery(b *testing.B) {
	a := agenttest.NewAnthropic(b)
	for i := range b.N {
		a.WhenTail(fmt.Sprintf("BENCH-HL-%d:", i), agenttest.Reply(agenttest.Text(fmt.Sprintf("BENCH-HL-ANSWER-%d", i))))
	}
	dir := agenttest.GitRepo(b, map[string]string{"README.md": "demo\n"})
	sid := hooklessInProcess(b, dir, a)
	s, _ := conversation.OpenSession(dir, sid)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i > 0 {
			eventually(b, time.Minute, "the TUI idle", func() bool {
				claudecode.ForgetRegistry()
				list, _ := claudecode.Registry(context.Background())
				return len(list) == 1 && list[0].Status == claudecode.StatusIdle
			})
		}
		claudecode.ForgetRegistry() // a new `send` process: no answer in memory (the user's cache folder keeps the last one)
		start := time.Now()
		r, err := conversation.Send(dir, sid, "bench", fmt.Sprintf("BENCH-HL-%d: ping", i))
		if err != nil || r.SocketErr != nil {
			b.Fatal(err, r.SocketErr)
		}
		var req agenttest.Recorded
		eventually(b, time.Minute, "the message's request", func() bool {
			var ok bool
			req, ok = requestWith(a, "chat message "+r.Message.ID+" ")
			return ok
		})
		lat = append(lat, req.At.Sub(start))
		eventually(b, time.Minute, "the answer in the transcript", func() bool {
			tr := conversation.LocateTranscript(s)
			data, _ := os.ReadFile(tr)
			return strings.Contains(string(data), fmt.Sprintf("BENCH-HL-ANSWER-%d", i))
		})
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.95).Microseconds())/1000, "p95-ms")
	b.Logf("idle hookless delivery, send → model request, n=%d: p50 %s, p95 %s, max %s", len(lat), p(0.5).Round(time.Millisecond), p(0.95).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
}
