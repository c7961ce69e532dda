package agents_test

import (
	"context"
	"io"
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
	report := func(b *testing.B, d []time.Duration) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
	}
	b.Run("direct", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			t0 := time.Now()
			cmd := &exec.Cmd{Path: inv.Path, Args: inv.Argv, Dir: inv.Dir, Env: inv.Env}
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
			d = append(d, time.Since(t0))
		}
		report(b, d)
	})
	b.Run("relay-baton", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			t0 := time.Now()
			n := 0
			r := req
			r.OnActivity = func(events.Activity) { n++ }
			res := agents.Run(context.Background(), r)
			if res.Err != nil || n == 0 {
				b.Fatalf("%s", res.Summary)
			}
			d = append(d, time.Since(t0))
		}
		report(b, d)
	})
}
