//go:build unix

package conversation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/procfacts"
)

// The stress test re-executes this test binary as claimer processes: with
// RB_STRESS_CLAIMER set, TestMain runs claimerMain instead of the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv("RB_STRESS_CLAIMER"); spec != "" {
		os.Exit(claimerMain(spec))
	}
	if spec := os.Getenv("RB_STRESS_ENQUEUER"); spec != "" {
		os.Exit(enqueuerMain(spec))
	}
	if ws := os.Getenv("RB_QUEUE_LANE"); ws != "" {
		os.Exit(queueLaneMain(ws))
	}
	if ws := os.Getenv("RB_SOCKET_POSTER"); ws != "" {
		os.Exit(socketPosterMain(ws))
	}
	if p := os.Getenv("RB_PEER_LISTENER"); p != "" {
		os.Exit(peerListenerMain(p))
	}
	os.Exit(m.Run())
}

// claimerMain claims messages until the producer's done marker exists and
// the inbox is empty, writing each claimed id on a line of its output file.
// spec = workspace|lane|out.
func claimerMain(spec string) int {
	parts := strings.Split(spec, "|")
	ws, lane, out := parts[0], Lane(parts[1]), parts[2]
	s, err := OpenSession(ws, testSID)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f, err := os.Create(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	done := filepath.Join(ws, "producer-done")
	parent := os.Getppid()
	for {
		if os.Getppid() != parent {
			// The test that started this claimer is gone (killed by a
			// timeout, say): its done marker will never come.
			fmt.Fprintln(os.Stderr, "claimer: the test process is gone; stopping")
			return 1
		}
		var res ClaimResult
		if lane == LaneSocket {
			// A sender's post to a socket that drops everything: the
			// posts are written as "posted <id>", never a delivery; each
			// goes back to the inbox after the claim grace for the
			// other lanes.
			posted, perr := postSocket(s, w)
			if perr != nil && !errors.Is(perr, errSocketDrops) && !errors.Is(perr, errNoSocket) {
				fmt.Fprintln(os.Stderr, perr)
				return 1
			}
			if posted == 0 {
				if _, err := os.Stat(done); err == nil && stressDrained(s) {
					return 0
				}
				time.Sleep(2 * time.Millisecond)
			}
			continue
		}
		if lane == LaneHook {
			// The Stop hook's shape: a single claim attempt per turn end.
			res, err = s.Claim(lane)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			res, err = s.waitClaim(ctx, lane, false, 100*time.Millisecond)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				err = nil
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if res.OK {
			fmt.Fprintln(w, res.Message.ID)
			continue
		}
		if _, err := os.Stat(done); err == nil {
			if stressDrained(s) {
				return 0
			}
		} else if lane == LaneHook {
			time.Sleep(time.Millisecond)
		}
	}
}

// stressDrained: nothing in the inbox and no claim in progress (a socket
// post waits out its grace in claims/ before it goes back).
func stressDrained(s *Session) bool {
	if has, _ := s.hasPending(); has {
		return false
	}
	names, _ := os.ReadDir(s.ClaimsDir())
	return len(names) == 0
}

// postSocket is deliverSocket writing each posted id as "posted <id>".
func postSocket(s *Session, w *bufio.Writer) (int, error) {
	info, err := s.SocketLane()
	if err != nil {
		return 0, err
	}
	n := 0
	for range maxSocketBurst {
		res, err := s.ClaimWith(LaneSocket, ClaimOptions{Handover: true})
		if err != nil || !res.OK {
			return n, err
		}
		if err := claudecode.Post(context.Background(), info.Path, info.Token, info.Process.PID, s.Frame(res.Message), socketTimeout); err != nil {
			_ = res.abandon(err)
			return n, err
		}
		_ = res.Delivered()
		fmt.Fprintln(w, "posted", res.Message.ID)
		n++
	}
	return n, nil
}

// enqueuerMain enqueues n messages through Send, the one entry point the
// room (room/orchestrator.go), `relay-baton serve` (server/backend.go) and
// `relay-baton send` share, and writes each id on a line of its output
// file. spec = workspace|from|n|out.
func enqueuerMain(spec string) int {
	parts := strings.Split(spec, "|")
	ws, kind, out := parts[0], parts[1], parts[3]
	n, _ := strconv.Atoi(parts[2])
	s, err := OpenSession(ws, testSID)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f, err := os.Create(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	for i := range n {
		r, err := Send(ws, testSID, kind, fmt.Sprintf("%s message %d", kind, i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(w, r.Message.ID)
		if i%100 == 99 { // keep the inbox listing realistic (a few hundred, not thousands)
			for q, _ := s.Queue(); q.Depth > 200; q, _ = s.Queue() {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	return 0
}

// startChild re-executes the test binary with env set.
func startChild(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env, "HOME="+t.TempDir())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// readIDs reads the id files children wrote, one id a line.
func readIDs(t *testing.T, files []string) (map[string]int, []int) {
	t.Helper()
	ids := map[string]int{}
	per := make([]int, len(files))
	for i, out := range files {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			id := strings.TrimSpace(line)
			if id == "" || strings.HasPrefix(id, "posted ") {
				continue // a socket post: not a delivery
			}
			ids[id]++
			per[i]++
		}
	}
	return ids, per
}

var stressLanes = []Lane{LaneHook, LaneRewake, LaneMonitor}

// stress starts 8 claimer processes across the three lanes, plus two
// senders posting to a messaging socket that drops every post (so each
// post goes back to the inbox after the claim grace; the socket lane,
// turned off by each drop, is turned on again every few milliseconds as if
// the session restarted), runs produce (which returns every id it
// enqueued, each once), then checks that every message was delivered (by
// a lane with evidence) exactly once: none lost, none doubled.
func stress(t *testing.T, n int, produce func(s *Session) map[string]int) {
	s := newSession(t)
	t.Setenv("RELAY_BATON_CLAIM_GRACE", "20ms") // the children inherit it
	sock := newFakeSocket(t)
	go func() { // drain: a socket that takes everything and shows nothing
		for range sock.posts {
		}
	}()
	if err := s.RecordSocket(SocketInfo{Path: sock.path, Process: procfacts.ThisProcess()}); err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	var procs []*exec.Cmd
	var outs []string
	for i := range 10 {
		lane := LaneSocket
		if i < 8 {
			lane = stressLanes[i%len(stressLanes)]
		}
		out := filepath.Join(outDir, fmt.Sprintf("claimer-%d.txt", i))
		procs = append(procs, startChild(t, "RB_STRESS_CLAIMER="+s.Workspace+"|"+string(lane)+"|"+out))
		outs = append(outs, out)
	}
	stopRestarts := make(chan struct{})
	restarted := make(chan int)
	go func() { // the session "restarts": the socket lane is tried again
		k := 0
		for {
			select {
			case <-stopRestarts:
				restarted <- k
				return
			case <-time.After(5 * time.Millisecond):
				if os.Remove(s.path(socketOffName)) == nil {
					k++
				}
			}
		}
	}()
	start := time.Now()
	sent := produce(s)
	close(stopRestarts)
	restarts := <-restarted
	os.WriteFile(filepath.Join(s.Workspace, "producer-done"), nil, 0o600)
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("claimer %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	if len(sent) != n {
		t.Fatalf("%d distinct ids enqueued, want %d", len(sent), n)
	}
	for id, c := range sent {
		if c != 1 {
			t.Fatalf("Enqueue returned id %s %d times", id, c)
		}
	}
	claimed, perProc := readIDs(t, outs)
	lost, doubled := 0, 0
	for id, c := range claimed {
		if c != 1 {
			doubled += c - 1
			t.Errorf("message %s claimed %d times", id, c)
		}
		if sent[id] == 0 {
			t.Errorf("claimed unknown id %s", id)
		}
	}
	for id := range sent {
		if claimed[id] == 0 {
			lost++
			t.Errorf("message %s lost", id)
		}
	}
	ents, _ := os.ReadDir(s.DeliveredDir())
	if len(ents) != n {
		t.Errorf("delivered/ holds %d files, want %d", len(ents), n)
	}
	if q, _ := s.Queue(); q.Depth != 0 {
		t.Errorf("inbox still holds %d", q.Depth)
	}
	lanes := map[Lane]int{}
	for _, e := range ents {
		st, err := s.State(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil || st.Delivered == nil {
			t.Fatalf("delivered record %s: %+v %v", e.Name(), st, err)
		}
		lanes[st.Delivered.Lane]++
	}
	for _, l := range stressLanes {
		if lanes[l] == 0 {
			t.Errorf("no message delivered through the %s lane: %v", l, lanes)
		}
	}
	posted, dropped := 0, 0
	for _, out := range outs {
		b, _ := os.ReadFile(out)
		posted += strings.Count(string(b), "posted ")
	}
	for _, e := range ents {
		if st, _ := s.State(strings.TrimSuffix(e.Name(), ".json")); st.Delivered != nil && st.Delivered.SocketPost != nil {
			dropped++
		}
	}
	if posted == 0 || dropped == 0 {
		t.Errorf("the dropping socket took no message (posted %d, put back %d)", posted, dropped)
	}
	if lanes[LaneSocket] != 0 {
		t.Errorf("%d messages counted as delivered by a socket that shows nothing", lanes[LaneSocket])
	}
	t.Logf("%d messages, 8 claimer processes and 2 senders posting to a dropping socket: %v; %d posts dropped (%d messages put back, socket lane turned on again %d times); %d lost, %d doubled; per process %v; per lane %v", n, elapsed, posted, dropped, restarts, lost, doubled, perProc, lanes)
}

// Eight claimer processes (hook-style single claims, rewake and monitor
// waiters) drain 10,000 messages enqueued while they run: none lost, none
// claimed twice, and every delivered record carries its lane.
func TestStressEightClaimerProcesses(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	stress(t, n, func(s *Session) map[string]int {
		sent := make(map[string]int, n)
		for i := range n {
			m, err := s.Enqueue("stress", fmt.Sprintf("message %d", i))
			if err != nil {
				t.Fatal(err)
			}
			sent[m.ID]++
			if i%200 == 199 {
				for q, _ := s.Queue(); q.Depth > 200; q, _ = s.Queue() {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
		return sent
	})
}

// The same with two producer processes at once, standing in for the room
// and `relay-baton serve` enqueueing together: both reach the inbox through
// conversation.Send (which also appends the session log), so each process
// calls it as its own producer. (The server package is not on this branch;
// its call is the one exercised here.)
func TestStressTwoEnqueuerProcesses(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	stress(t, n, func(s *Session) map[string]int {
		dir := t.TempDir()
		var outs []string
		var procs []*exec.Cmd
		for _, kind := range []string{"room", "serve"} {
			out := filepath.Join(dir, kind+".txt")
			procs = append(procs, startChild(t, "RB_STRESS_ENQUEUER="+s.Workspace+"|"+kind+"|"+strconv.Itoa(n/2)+"|"+out))
			outs = append(outs, out)
		}
		for i, p := range procs {
			if err := p.Wait(); err != nil {
				t.Fatalf("enqueuer %d: %v", i, err)
			}
		}
		sent, per := readIDs(t, outs)
		if per[0] != n/2 || per[1] != n/2 {
			t.Fatalf("enqueuers wrote %v ids, want %d each", per, n/2)
		}
		// Both producers logged each message they sent, none torn.
		logged := 0
		if b, err := os.ReadFile(s.LogPath()); err == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var e chatlog.Entry
				if json.Unmarshal([]byte(l), &e) != nil || sent[e.ID] != 1 {
					t.Fatalf("session log line %q is not a sent message", l)
				}
				logged++
			}
		}
		if logged != n {
			t.Errorf("session log holds %d lines, want %d", logged, n)
		}
		return sent
	})
}
