package room

import (
	"fmt"
	"os"
	"path/filepath"
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

// The pager gets the whole screen, not the rows above the pinned panel:
// the diff's first line is its first row; the panel is back after it.
func TestTmuxPagerHasTheWholeScreen(t *testing.T) {
	dir := newRepo(t)
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startTmuxRoom(t, dir, 100, 40, []string{"chat"})
	r.waitScreen("the panel", panelAtBottom, time.Minute)
	r.line("/diff --all")
	scr := r.waitScreen("the pager", func(s string) bool {
		rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return len(rows) == 40 && strings.TrimSpace(rows[39]) == ":" && strings.Contains(s, "+line 3")
	}, time.Minute)
	if !strings.HasPrefix(scr, "diff --git") {
		t.Fatalf("the pager's first row is not the diff's first line:\n%s", scr)
	}
	r.run("send-keys", "-t", "g", "q")
	r.waitScreen("the panel again", func(s string) bool { return panelAtBottom(s) && strings.Contains(s, "claude›") }, time.Minute)
}

// A resize never leaves a panel in the scrollback: shrunk below the
// panel's width the box is gone (the one-line status takes its place at
// the next prompt), grown back it is pinned again, once.
func TestTmuxResizeLeavesNoPanelBehind(t *testing.T) {
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 40, []string{"chat"})
	r.waitScreen("the panel", panelAtBottom, time.Minute)
	// A full screen: the prompt on the region's last row, the box below.
	r.line("/help")
	r.wait("/help", 2, time.Minute)
	r.line("/help")
	r.wait("/help", 4, time.Minute)
	r.line("/status")
	r.wait("last run: none", 1, time.Minute)
	r.waitScreen("the panel after /status", func(s string) bool { return panelAtBottom(s) && strings.Contains(s, "claude›") }, time.Minute)
	r.run("resize-window", "-t", "g", "-x", "60", "-y", "24")
	r.settle("the prompt at 60 columns and no box", time.Minute, func(all, scr string) bool {
		return strings.HasSuffix(strings.TrimRight(scr, "\n "), "claude›") && !strings.Contains(all, "context ─") && !strings.Contains(all, "└─")
	})
	r.line("/note narrow")
	r.wait("noted.", 1, time.Minute)
	r.run("resize-window", "-t", "g", "-x", "120", "-y", "40")
	r.settle("one panel at 120 columns", time.Minute, func(all, scr string) bool {
		return panelAtBottom(scr) && strings.Count(all, "┌─ context") == 1 && strings.Count(all, "└─") == 1
	})
}

// During a run the same: shrunk below the panel's width, no box is left
// behind, the run's live line goes on at the bottom.
func TestTmuxResizeDuringRun(t *testing.T) {
	_, fake := binaries(t)
	dir := newRepo(t)
	r := startTmuxRoom(t, dir, 120, 40, []string{"chat"}, "RELAY_BATON_CLAUDE="+fake, "RELAY_BATON_CODEX="+fake, "FAKE_AGENT_SLEEP=600")
	r.waitScreen("the panel", panelAtBottom, time.Minute)
	r.line("/help")
	r.wait("/help", 2, time.Minute)
	r.line("what now")
	r.wait("run this?", 1, time.Minute)
	r.run("send-keys", "-t", "g", "y")
	r.wait("claude thinking", 1, time.Minute)
	r.run("resize-window", "-t", "g", "-x", "70", "-y", "30")
	r.settle("the live line and no box at 70 columns", time.Minute, func(all, scr string) bool {
		rows := strings.Split(strings.TrimRight(scr, "\n "), "\n")
		return !strings.Contains(all, "context ─") && !strings.Contains(all, "└─") && strings.Contains(rows[len(rows)-1], "claude thinking")
	})
	r.run("send-keys", "-t", "g", "C-c")
	r.wait("cancelled", 1, time.Minute)
}
