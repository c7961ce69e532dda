package conversation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The stress test re-executes this test binary as claimer processes: with
// RB_STRESS_CLAIMER set, TestMain runs claimerMain instead of the tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv("RB_STRESS_CLAIMER"); spec != "" {
		os.Exit(claimerMain(spec))
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
	for {
		var res ClaimResult
		if lane == LaneHook {
			// The Stop hook's shape: a single claim attempt per turn end.
			res, err = s.Claim(lane)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			res, err = s.WaitClaim(ctx, lane, false, 100*time.Millisecond)
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
			if has, _ := s.HasPending(); !has {
				return 0
			}
		} else if lane == LaneHook {
			time.Sleep(time.Millisecond)
		}
	}
}

// Eight claimer processes (four hook-style, four waiters) drain 10,000
// messages enqueued while they run: none lost, none claimed twice, and
// every delivered record carries its lane.
func TestStressEightClaimerProcesses(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	s := newSession(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	var procs []*exec.Cmd
	var outs []string
	for i := range 8 {
		lane := LaneHook
		if i%2 == 1 {
			lane = LaneRewake
		}
		out := filepath.Join(outDir, fmt.Sprintf("claimer-%d.txt", i))
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "RB_STRESS_CLAIMER="+s.Workspace+"|"+string(lane)+"|"+out)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	sent := make(map[string]bool, n)
	start := time.Now()
	for i := range n {
		m, err := s.Enqueue("stress", fmt.Sprintf("message %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if sent[m.ID] {
			t.Fatalf("Enqueue reused id %s", m.ID)
		}
		sent[m.ID] = true
		if i%200 == 199 { // keep the inbox listing realistic (a few hundred, not thousands)
			for q, _ := s.Queue(); q.Depth > 200; q, _ = s.Queue() {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	os.WriteFile(filepath.Join(s.Workspace, "producer-done"), nil, 0o600)
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("claimer %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	claimed := map[string]int{}
	perProc := make([]int, len(outs))
	for i, out := range outs {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range strings.Fields(string(b)) {
			claimed[id]++
			perProc[i]++
		}
	}
	for id, c := range claimed {
		if c != 1 {
			t.Errorf("message %s claimed %d times", id, c)
		}
		if !sent[id] {
			t.Errorf("claimed unknown id %s", id)
		}
	}
	for id := range sent {
		if claimed[id] == 0 {
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
	st, err := s.State(ents[len(ents)/2].Name()[:8])
	if err != nil || st.Delivered == nil || (st.Delivered.Lane != LaneHook && st.Delivered.Lane != LaneRewake) {
		t.Errorf("a delivered record: %+v %v", st, err)
	}
	t.Logf("%d messages, 8 claimer processes: %v; per process %v", n, elapsed, perProc)
}
