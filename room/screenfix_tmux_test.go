package room

import (
	"strings"
	"testing"
	"time"
)

// What a new user saw on the room's screen in a real terminal emulator
// (tmux): narrow windows, pagers, resizes.

// At 60 columns the confirmation's keys hint goes on a line of its own
// above the question: the question is asked once, on one line.
func TestTmuxNarrowConfirmationOnce(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 60, 20, []string{"chat"}, "RELAY_BATON_CLAUDE="+fake, "RELAY_BATON_CODEX="+fake)
	r.wait("claude›", 1, time.Minute)
	r.line("/plan add a flag")
	r.wait("run this? [y/N/e]", 1, time.Minute)
	r.run("send-keys", "-t", "g", "n")
	r.wait("cancelled. nothing ran.", 1, time.Minute)
	all := r.all()
	if n := strings.Count(all, "run this?"); n != 1 {
		t.Fatalf("the question is shown %d times:\n%s", n, all)
	}
	if n := strings.Count(all, "v views all"); n != 1 {
		t.Fatalf("the keys hint is shown %d times:\n%s", n, all)
	}
	if !strings.Contains(all, "\nrun this? [y/N/e] n") {
		t.Fatalf("the answer is not on the question's line:\n%s", all)
	}
}
