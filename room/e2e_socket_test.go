//go:build unix

package room

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/conversation"
)

// The socket lane end to end: the real interactive Claude Code in tmux
// with cross-session messaging on (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
// unset; DISABLE_AUTOUPDATER=1 kept), relay-baton's hooks installed.

// messagingEnv is ClaudeEnv with messaging on: without
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC and relay-baton's switch of the
// socket lane.
func messagingEnv(t testing.TB, a *agenttest.Anthropic) []string {
	var env []string
	for _, e := range agenttest.ClaudeEnv(t, a, "") {
		if !strings.HasPrefix(e, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=") && !strings.HasPrefix(e, conversation.NoSocketEnv+"=") {
			env = append(env, e)
		}
	}
	return env
}

// relayRun runs the built relay-baton in dir and returns its combined
// output and how long it took; a hang guard of d.
func relayRun(t testing.TB, dir string, env []string, d time.Duration, args ...string) (string, time.Duration) {
	t.Helper()
	bin, _ := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), max(d, ptyGuard)) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	home, _ := agenttest.EnvValue(env, "HOME")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "HOME=" + home}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("relay-baton %q: %v after %s\n%s", args, err, time.Since(start), out)
	}
	return string(out), time.Since(start)
}

// requestWith returns the first agent request whose TailText holds all of
// subs (the request that handed them to the model).
func requestWith(a *agenttest.Anthropic, subs ...string) (agenttest.Recorded, bool) {
next:
	for _, r := range a.Agent() {
		tail := agenttest.TailText(r)
		for _, s := range subs {
			if !strings.Contains(tail, s) {
				continue next
			}
		}
		return r, true
	}
	return agenttest.Recorded{}, false
}

// sentID is the message id `relay-baton send` printed ("queued <id> for ...").
func sentID(t testing.TB, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "queued "); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no message id in:\n%s", out)
	return ""
}

// TestE2ESocketLaneTUI: a message sent with `send --follow` while the TUI
// runs a slow tool call reaches the model in the same request as that
// tool's result (mid-turn, not at the turn's end) and is answered; an idle
// session answers at once; one sent from the room while busy goes the same
// way; a message left in the inbox is posted by the Stop hook (a child of
// the session) instead of a block. Each reply is stored in outbox/ by the
// Stop hook, and the TUI never shows a Stop hook problem.
func TestE2ESocketLaneTUI(t *testing.T) {
	const (
		busyQ, busyA = "SOCK-BUSY-Q1: how far along?", "SOCK-BUSY-A1: the first step is done, one to go."
		turnEnd      = "SOCK-TURN-END: both steps finished."
		idleQ, idleA = "SOCK-IDLE-Q2: anything left?", "SOCK-IDLE-A2: nothing is left."
		roomQ, roomA = "SOCK-ROOM-Q3: status from the room?", "SOCK-ROOM-A3: the room's answer."
		hookQ, hookA = "SOCK-HOOK-Q4: left in the inbox", "SOCK-HOOK-A4: posted by the Stop hook."
	)
	a := agenttest.NewAnthropic(t)
	a.WhenTail("SOCK-BUSY-Q1", agenttest.Reply(agenttest.Text(busyA), agenttest.Bash("sleep 3; echo second-step-finished")))
	a.WhenTail("SOCK-ROOM-Q3", agenttest.Reply(agenttest.Text(roomA), agenttest.Bash("sleep 3; echo second-step-finished")))
	a.WhenTail("SOCK-HOOK-Q4", agenttest.Reply(agenttest.Text(hookA)))
	a.WhenTail("SOCK-IDLE-Q2", agenttest.Reply(agenttest.Text(idleA)))
	a.When("SOCK-SLOW-STEP", agenttest.Reply(agenttest.Bash("sleep 8; echo first-step-finished")))
	a.When("second-step-finished", agenttest.Reply(agenttest.Text(turnEnd)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := messagingEnv(t, a)
	u := startTUI(t, dir, env)
	s := chatSession(t, dir)
	eventually(t, 30*time.Second, "the session's messaging socket recorded by its hooks", func() bool {
		_, err := s.SocketLane()
		return err == nil
	})
	info, _ := s.Socket()
	if fi, err := os.Stat(filepath.Join(s.Dir(), "socket.json")); err != nil || fi.Mode().Perm() != 0o600 || info.Token == "" {
		t.Fatalf("socket.json: %v %v (token recorded: %v)", fi, err, info.Token != "")
	}
	out, _ := relayRun(t, dir, env, 10*time.Second, "targets")
	if !strings.Contains(out, "socket: at once") {
		t.Fatalf("targets of an idle session with a socket:\n%s", out)
	}

	// Busy: the TUI runs `sleep 8` when the message is sent.
	slow := func(what string) {
		t.Helper()
		n := len(a.Agent())
		u.typeLine(t, "SOCK-SLOW-STEP: run the slow steps ("+what+")")
		eventually(t, 30*time.Second, "the TUI's slow Bash step", func() bool {
			rs := a.Agent()
			return len(rs) > n && strings.Contains(agenttest.LastUserText(rs[len(rs)-1]), "SOCK-SLOW-STEP") && s.Busy(time.Now())
		})
	}
	slow("cli")
	time.Sleep(time.Second) // the tool call runs
	out, _ = relayRun(t, dir, env, 10*time.Second, "targets")
	if !strings.Contains(out, "busy, socket: between tool calls") {
		t.Fatalf("targets of a busy session with a socket:\n%s", out)
	}
	sent := time.Now()
	out, took := relayRun(t, dir, env, 90*time.Second, "send", "--lead", "--follow", busyQ)
	id := sentID(t, out)
	for _, want := range []string{"delivered via socket at ", busyA, turnEnd, "✓ end of turn"} {
		if !strings.Contains(out, want) {
			t.Fatalf("send --follow to the busy session lacks %q:\n%s", want, out)
		}
	}
	req, ok := requestWith(a, "first-step-finished", "chat message "+id+" ")
	if !ok {
		t.Fatalf("no request carried the tool's result and message %s together", id)
	}
	last := a.Agent()[len(a.Agent())-1]
	busyLatency, busyTurn := req.At.Sub(sent), last.At.Sub(sent)
	t.Logf("busy: send → the model's request %s (the next tool boundary); the turn's last request %s after the send; send --follow took %s",
		busyLatency.Round(time.Millisecond), busyTurn.Round(time.Millisecond), took.Round(time.Millisecond))
	if text, ok := s.Reply(id); !ok || text != turnEnd {
		t.Fatalf("outbox/%s.json: %q %v, want the turn's last text", id, text, ok)
	}
	u.waitScreen(t, 10*time.Second, busyQ)

	// Idle: the turn is over; a message starts a new one at once.
	eventually(t, 30*time.Second, "the TUI idle", func() bool { return !s.Busy(time.Now()) })
	sent = time.Now()
	out, took = relayRun(t, dir, env, 60*time.Second, "send", "--lead", "--follow", idleQ)
	id = sentID(t, out)
	if !strings.Contains(out, "delivered via socket at ") || !strings.Contains(out, idleA) || !strings.Contains(out, "✓ end of turn") {
		t.Fatalf("send --follow to the idle session:\n%s", out)
	}
	req, _ = requestWith(a, "chat message "+id+" ")
	t.Logf("idle: send → the model's request %s; send --follow took %s", req.At.Sub(sent).Round(time.Millisecond), took.Round(time.Millisecond))
	if text, ok := s.Reply(id); !ok || text != idleA {
		t.Fatalf("outbox/%s.json: %q %v", id, text, ok)
	}
	u.waitScreen(t, 10*time.Second, idleA)

	// From the room, while busy.
	eventually(t, 30*time.Second, "the TUI idle", func() bool { return !s.Busy(time.Now()) })
	home, _ := agenttest.EnvValue(env, "HOME")
	p := startBinary(t, dir, "NO_COLOR=1", "HOME="+home)
	slow("room")
	sendFromRoom(t, p, s.ID, roomQ, "in a turn; delivers: socket, between tool calls")
	p.untilWithin(t, "delivered via socket at ", 30*time.Second)
	// A message left in the inbox while the turn runs (no sender posts it:
	// the room's message is delivered) waits for the turn's end, where the
	// Stop hook, a child of the session, posts it to the socket.
	hm, err := s.Enqueue("test", hookQ)
	if err != nil {
		t.Fatal(err)
	}
	p.untilWithin(t, "[orchestrator] "+roomA, 30*time.Second)
	p.untilWithin(t, "orchestrator: ✓ end of turn", 60*time.Second)
	p.until(t, "orchestrator› ")
	p.send(t, "\x04")
	p.wait(t)
	eventually(t, 60*time.Second, "the Stop hook's post answered", func() bool { _, ok := s.Reply(hm.ID); return ok })
	if st, err := s.State(hm.ID); err != nil || st.Delivered == nil || st.Delivered.Lane != conversation.LaneSocket {
		t.Fatalf("the message left in the inbox: %+v %v, want delivered by the socket lane", st, err)
	}
	if text, _ := s.Reply(hm.ID); text != hookA {
		t.Fatalf("its reply %q", text)
	}
	u.waitScreen(t, 10*time.Second, hookA)

	sc := u.screen(t)
	for _, bad := range []string{"Stop hook reported a problem", "Stop hook feedback", "Stop hook error"} {
		if strings.Contains(sc, bad) {
			t.Fatalf("the TUI shows %q:\n%s", bad, sc)
		}
	}
	for _, want := range []string{"SOCK-BUSY-Q1", "SOCK-IDLE-Q2", "SOCK-ROOM-Q3", "SOCK-HOOK-Q4"} {
		if !strings.Contains(sc, want) {
			t.Errorf("the TUI does not show %q", want)
		}
	}
	t.Logf("TUI:\n%s", sc)
	if b, _ := os.ReadFile(filepath.Join(s.Dir(), "errors.log")); strings.Contains(string(b), info.Token) {
		t.Fatalf("errors.log holds the token")
	}
}

// TestE2ESocketOffFallsBack: with the socket lane off (ClaudeEnv: the
// session's hooks record no socket; CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
// alone leaves Claude Code 2.1.328's socket on) the same sends go by the
// Stop hook (busy: at the turn's end) and the rewake waiter (idle), and
// the Stop hook stores both replies.
func TestE2ESocketOffFallsBack(t *testing.T) {
	const (
		busyQ, busyA = "OFF-BUSY-Q1: how far along?", "OFF-BUSY-A1: at the turn's end."
		turnEnd      = "OFF-TURN-END: both steps finished."
		idleQ, idleA = "OFF-IDLE-Q2: anything left?", "OFF-IDLE-A2: nothing is left."
	)
	a := agenttest.NewAnthropic(t)
	a.WhenTail("OFF-BUSY-Q1", agenttest.Reply(agenttest.Text(busyA)))
	a.WhenTail("OFF-IDLE-Q2", agenttest.Reply(agenttest.Text(idleA)))
	a.When("OFF-SLOW-STEP", agenttest.Reply(agenttest.Bash("sleep 8; echo first-step-finished")))
	a.When("first-step-finished", agenttest.Reply(agenttest.Bash("sleep 3; echo second-step-finished")))
	a.When("second-step-finished", agenttest.Reply(agenttest.Text(turnEnd)))
	dir := agenttest.GitRepo(t, map[string]string{"README.md": "demo\n"})
	installHooks(t, dir)
	env := agenttest.ClaudeEnv(t, a, "")
	u := startTUI(t, dir, env)
	s := chatSession(t, dir)
	u.typeLine(t, "OFF-SLOW-STEP: run the slow steps")
	eventually(t, 30*time.Second, "the TUI's slow Bash step", func() bool {
		_, ok := requestWith(a, "OFF-SLOW-STEP")
		return ok && s.Busy(time.Now())
	})
	if _, ok := s.Socket(); ok {
		t.Fatal("a socket was recorded with the socket lane off")
	}
	time.Sleep(time.Second)
	sent := time.Now()
	out, took := relayRun(t, dir, env, 90*time.Second, "send", "--lead", "--follow", busyQ)
	id := sentID(t, out)
	if !strings.Contains(out, "delivered via hook at ") || !strings.Contains(out, busyA) {
		t.Fatalf("send --follow with messaging off:\n%s", out)
	}
	req, ok := requestWith(a, "chat message "+id+" ")
	if !ok {
		t.Fatal("the message never reached the model")
	}
	tool, _ := requestWith(a, "second-step-finished")
	if !req.At.After(tool.At) {
		t.Fatalf("the Stop hook lane delivered before the turn's end")
	}
	t.Logf("busy, messaging off: send → the model's request %s (the turn's end); send --follow took %s", req.At.Sub(sent).Round(time.Millisecond), took.Round(time.Millisecond))
	if text, ok := s.Reply(id); !ok || text != busyA {
		t.Fatalf("outbox/%s.json: %q %v", id, text, ok)
	}
	eventually(t, 30*time.Second, "the TUI idle with a waiter armed", func() bool { return !s.Busy(time.Now()) && s.Waiting() })
	out, _ = relayRun(t, dir, env, 60*time.Second, "send", "--lead", "--follow", idleQ)
	id = sentID(t, out)
	if !strings.Contains(out, "delivered via rewake at ") || !strings.Contains(out, idleA) {
		t.Fatalf("send --follow to the idle session with messaging off:\n%s", out)
	}
	if text, ok := s.Reply(id); !ok || text != idleA {
		t.Fatalf("outbox/%s.json: %q %v", id, text, ok)
	}
	u.waitScreen(t, 10*time.Second, idleA)
}

// BenchmarkSocketIdleDelivery measures, with the real TUI idle, the time
// from a send (conversation.Send, as `send`, the room and serve do) to
// the model's request that carries the message, and reports its p50 and
// p95 (go test ./room -run '^$' -bench SocketIdle -benchtime 30x).
func BenchmarkSocketIdleDelivery(b *testing.B) {
	a := agenttest.NewAnthropic(b)
	for i := range b.N {
		a.WhenTail(fmt.Sprintf("BENCH-IDLE-%d:", i), agenttest.Reply(agenttest.Text(fmt.Sprintf("BENCH-ANSWER-%d", i))))
	}
	dir := agenttest.GitRepo(b, map[string]string{"README.md": "demo\n"})
	installHooks(b, dir)
	env := messagingEnv(b, a)
	startTUI(b, dir, env)
	s := chatSession(b, dir)
	eventually(b, 30*time.Second, "the messaging socket", func() bool { _, err := s.SocketLane(); return err == nil })
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		eventually(b, 30*time.Second, "the TUI idle", func() bool { return !s.Busy(time.Now()) })
		start := time.Now()
		r, err := conversation.Send(dir, s.ID, "bench", fmt.Sprintf("BENCH-IDLE-%d: ping", i))
		if err != nil || r.SocketErr != nil {
			b.Fatal(err, r.SocketErr)
		}
		var req agenttest.Recorded
		eventually(b, 30*time.Second, "the message's request", func() bool {
			var ok bool
			req, ok = requestWith(a, "chat message "+r.Message.ID+" ")
			return ok
		})
		lat = append(lat, req.At.Sub(start))
		if os.Getenv("RB_BENCH_TRACE") != "" {
			b.Logf("send %d at %s, request at %s", i, start.UTC().Format("15:04:05.000"), req.At.UTC().Format("15:04:05.000"))
		}
		eventually(b, 30*time.Second, "the stored reply", func() bool { _, ok := s.Reply(r.Message.ID); return ok })
	}
	b.StopTimer()
	if os.Getenv("RB_BENCH_TRACE") != "" {
		if tr := conversation.LocateTranscript(s); tr != "" {
			data, _ := os.ReadFile(tr)
			os.WriteFile(os.Getenv("RB_BENCH_TRACE"), data, 0o600)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.95).Microseconds())/1000, "p95-ms")
	b.Logf("idle socket delivery, send → model request, n=%d: p50 %s, p95 %s, max %s", len(lat), p(0.5).Round(time.Millisecond), p(0.95).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
}
