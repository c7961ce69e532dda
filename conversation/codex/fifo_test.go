//go:build unix

package codex

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// A FIFO at a Codex rollout's path: the targets view reads its first line
// and its end.
func TestFIFORollout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rollout.jsonl")
	testkit.MakeFIFO(t, p)
	if ok := agenttest.Within(t, "ReadRolloutMeta", func() bool { _, ok := ReadRolloutMeta(p); return ok }); ok {
		t.Fatal("a FIFO read as a rollout")
	}
	if busy := agenttest.Within(t, "InTurn", func() bool { return InTurn(p, time.Now(), 2*time.Hour) }); busy {
		t.Fatal("a FIFO read as a turn")
	}
}
