package agents_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// BenchmarkClaudeOverhead runs the same mock-backed `claude -p` command
// directly (exec, stdout drained) and through agents.Run (parsing, activity
// callback, commands.log), side by side. Compare the median-ms metrics.
func BenchmarkClaudeOverhead(b *testing.B) {
	bin := agenttest.ClaudeBin(b)
	root := agenttest.GitRepo(b, map[string]string{"a.txt": "hello\n"})
	mock := agenttest.NewAnthropic(b) // every turn: "done"
	req := agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "say done",
		Dir: root, SessionDir: root + "/.ai-session", Env: agenttest.ClaudeEnv(b, mock, bin)}
	inv, err := agents.Prepare(req)
	if err != nil {
		b.Fatal(err)
	}
	direct := func(b *testing.B) time.Duration {
		t0 := time.Now()
		cmd := &exec.Cmd{Path: inv.Path, Args: inv.Argv, Dir: inv.Dir, Env: inv.Env, Stderr: io.Discard}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	relay := func(b *testing.B) time.Duration {
		t0 := time.Now()
		n := 0
		r := req
		r.OnActivity = func(events.Activity) { n++ }
		res := agents.Run(context.Background(), r)
		if res.Err != nil || n == 0 {
			b.Fatalf("%s", res.Summary)
		}
		return time.Since(t0)
	}
	b.Run("direct", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			d = append(d, direct(b))
		}
		b.ReportMetric(median(d), "median-ms")
	})
	b.Run("relay-baton", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			d = append(d, relay(b))
		}
		b.ReportMetric(median(d), "median-ms")
	})
	// paired alternates the two in one loop, so that load from other
	// processes on the machine hits both alike; it reports both medians and
	// the median over pairs of relay-baton's overhead in percent.
	b.Run("paired", func(b *testing.B) {
		var dd, dr []time.Duration
		for b.Loop() {
			dd = append(dd, direct(b))
			dr = append(dr, relay(b))
		}
		ratios := make([]float64, len(dd))
		for i := range dd {
			ratios[i] = 100 * (float64(dr[i]) - float64(dd[i])) / float64(dd[i])
		}
		slices.Sort(ratios)
		b.ReportMetric(median(dd), "direct-median-ms")
		b.ReportMetric(median(dr), "relay-median-ms")
		b.ReportMetric(ratios[len(ratios)/2], "median-pair-overhead-%")
	})
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}

// BenchmarkRunOverheadProbe isolates relay-baton's own cost per run with a
// fake agent (the test binary printing its environment as ~100 lines):
// direct exec versus agents.Run, paired like BenchmarkClaudeOverhead.
func BenchmarkRunOverheadProbe(b *testing.B) {
	dir := b.TempDir()
	bin, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	req := agents.Request{Agent: agents.Claude, Role: agents.RoleAsk, Prompt: "x", Dir: dir, SessionDir: dir + "/.ai-session",
		Env: []string{agents.ClaudeBinEnv + "=" + bin, "RELAY_BATON_PROBE=env"}}
	inv, err := agents.Prepare(req)
	if err != nil {
		b.Fatal(err)
	}
	var dd, dr []time.Duration
	for b.Loop() {
		t0 := time.Now()
		cmd := &exec.Cmd{Path: inv.Path, Args: inv.Argv, Dir: inv.Dir, Env: inv.Env, Stdout: io.Discard, Stderr: io.Discard}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		dd = append(dd, time.Since(t0))
		t0 = time.Now()
		r := req
		r.OnActivity = func(events.Activity) {}
		if res := agents.Run(context.Background(), r); res.Err != nil {
			b.Fatal(res.Summary)
		}
		dr = append(dr, time.Since(t0))
	}
	md, mr := median(dd), median(dr)
	b.ReportMetric(md, "direct-median-ms")
	b.ReportMetric(mr, "relay-median-ms")
	b.ReportMetric(mr-md, "added-ms")
}
