//go:build unix

package conversation

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
	"github.com/relay-baton/relay-baton/safeio"
)

// A FIFO where the session's inbox or claims folder should be: every hook
// claims, and targets, the room and the server read the queue; none may
// hang (os.Open of a folder path blocks on a FIFO; only a listing opened
// with O_DIRECTORY|O_NONBLOCK does not).
func TestFIFOInPlaceOfChatFolders(t *testing.T) {
	for _, folder := range []string{"inbox", "claims"} {
		s := newSession(t)
		if _, err := s.Enqueue("room", "hello"); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.dir, folder)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		testkit.MakeFIFO(t, p)
		type claimed struct {
			res ClaimResult
			err error
		}
		c := agenttest.Within(t, folder+": claim", func() claimed { r, err := s.Claim(LaneHook); return claimed{r, err} })
		if c.res.OK {
			t.Fatalf("%s: claimed %+v", folder, c.res.Message)
		}
		if folder == "inbox" && !errors.Is(c.err, safeio.ErrNotRegular) {
			t.Fatalf("inbox: claim error %v, want one that says it is not a folder", c.err)
		}
		agenttest.Within(t, folder+": recover", func() []recovered { return recoverClaims(s) })
		if folder == "inbox" {
			err := agenttest.Within(t, "inbox: queue", func() error { _, err := s.Queue(); return err })
			if !errors.Is(err, safeio.ErrNotRegular) {
				t.Fatalf("inbox: queue error %v", err)
			}
		}
	}
}
