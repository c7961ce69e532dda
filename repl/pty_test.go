package repl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/room"
)

// The REPL in-process on a real pseudo-terminal, with a fake runner:
// confirmation, editing, cancellation, history, the pager.

// inProcess runs Run on a pty with a fake runner.
type inProcess struct {
	*screen
	e    *room.Engine
	fr   *fakeRunner
	dir  string
	done chan error
}

func startInProcess(t *testing.T, fr *fakeRunner, getenv func(string) string) *inProcess {
	t.Helper()
	return startOn(t, fr, getenv, false)
}

// startOn is startInProcess; with outTerminal the output is a terminal too
// (the pinned panel, the pager).
func startOn(t *testing.T, fr *fakeRunner, getenv func(string) string, outTerminal bool) *inProcess {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	pty.Setsize(master, &pty.Winsize{Rows: 50, Cols: 160})
	dir := newRepo(t)
	e, err := room.New(room.Config{Dir: dir, Runner: fr, Out: slave, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	ip := &inProcess{screen: newScreen(master), e: e, fr: fr, dir: dir, done: make(chan error, 1)}
	go func() {
		ip.done <- Run(context.Background(), e, Options{In: slave, Out: slave, Err: slave, Terminal: true, OutTerminal: outTerminal})
	}()
	t.Cleanup(func() {
		select {
		case <-ip.done:
		case <-time.After(ptyGuard):
			t.Error("Run did not return")
		}
		e.Close()
		slave.Close()
		master.Close()
	})
	return ip
}

func TestPTYInProcessConfirm(t *testing.T) {
	fr := &fakeRunner{}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r")
	p.until(t, "cancelled. nothing ran.")
	p.until(t, "claude› ")
	if fr.runs() != 0 {
		t.Fatal("the agent ran after n")
	}
	p.send(t, "\x04")
	if got := kinds(readLog(t, p.dir)); got != "command,prompt_preview,agent_run" {
		t.Fatalf("events %s", got)
	}
}

func TestPTYInProcessEdit(t *testing.T) {
	fr := &fakeRunner{}
	fr.run = func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{FinalText: "## Goal\nedited"}
	}
	bin := t.TempDir()
	script := filepath.Join(bin, "ed")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf 'PROMPT FROM EDITOR' > \"$1\"\n"), 0o755)
	p := startInProcess(t, fr, func(k string) string {
		if k == "VISUAL" {
			return script
		}
		return ""
	})
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "e\r")
	p.until(t, "PROMPT FROM EDITOR") // previewed again
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "wrote .ai-session/plan.md")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	if len(fr.ran) != 1 || fr.ran[0].Prompt != "PROMPT FROM EDITOR" {
		t.Fatalf("ran %+v", fr.ran)
	}
}

func TestPTYInProcessCtrlCCancelsRun(t *testing.T) {
	fr := &fakeRunner{}
	started := make(chan struct{})
	fr.run = func(ctx context.Context, _ int, r agents.Request) agents.Result {
		r.OnActivity(events.Activity{Source: r.Agent, Kind: events.ActTool, Tool: "Bash", Detail: "sleep 60"})
		close(started)
		select {
		case <-ctx.Done():
			return agents.Result{ExitCode: -1, Cancelled: true, Err: ctx.Err()}
		case <-time.After(20 * time.Second):
			return agents.Result{}
		}
	}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	p.send(t, "what is here?\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "y\r")
	p.until(t, "⚙ Bash: sleep 60")
	<-started
	// In cooked mode the terminal turns ^C into SIGINT for the foreground
	// process group; here the test process is not attached to this pty, so
	// deliver the signal the terminal would send.
	interruptSelf()
	p.until(t, "cancelled")
	p.until(t, "claude› ")
	p.send(t, "/status\r")
	p.until(t, "last run: claude /ask, cancelled")
	if s := p.String(); strings.Count(s, "claude: cancelled") != 1 || strings.Contains(s, "cancelled (Ctrl-C)") {
		t.Fatalf("one Ctrl-C should print one cancel line:\n%s", s)
	}
	p.send(t, "\x04")
	var run events.Event
	for _, e := range readLog(t, p.dir) {
		if e.Kind == events.KindAgentRun {
			run = e
		}
	}
	if metaMap(run.Meta)["cancelled"] != true || metaMap(run.Meta)["confirmed"] != true {
		t.Fatalf("agent_run %s", run.Meta)
	}
}

func TestPTYHistoryKeepsCommandsNotAnswers(t *testing.T) {
	fr := &fakeRunner{}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	p.send(t, "/plan add a flag\r")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r")
	p.until(t, "claude› ")
	p.send(t, "\x1b[A") // Up: the previous command, not the "n" answer
	p.until(t, "/plan add a flag")
	p.send(t, "\x15\x04")
	select { // the room has ended (Ctrl-D): its history is written
	case err := <-p.done:
		p.done <- err // for the cleanup's check
	case <-time.After(ptyGuard):
		t.Fatal("Run did not return after Ctrl-D")
	}
	b, _ := os.ReadFile(filepath.Join(p.dir, ".ai-session", "room_history"))
	if strings.TrimSpace(string(b)) != "/plan add a flag" {
		t.Fatalf("history %q", b)
	}
}

// TestPTYDiffPages: a diff taller than the terminal goes to $PAGER (here
// a script that keeps what it is given), not onto the screen.
func TestPTYDiffPages(t *testing.T) {
	fr := &fakeRunner{}
	fr.run = func(_ context.Context, _ int, r agents.Request) agents.Result {
		var b strings.Builder
		for i := range 100 {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		os.WriteFile(filepath.Join(r.Dir, "big.txt"), []byte(b.String()), 0o644)
		return agents.Result{FinalText: "done"}
	}
	pager := filepath.Join(t.TempDir(), "pager")
	if err := os.WriteFile(pager, []byte("#!/bin/sh\ncat > \"$0.out\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startOn(t, fr, func(k string) string {
		if k == "PAGER" {
			return pager
		}
		return ""
	}, true)
	defer s.send(t, "\x04")
	os.WriteFile(filepath.Join(s.e.SessionDir, "plan.md"), []byte("## Goal\nbig\n"), 0o600)
	s.until(t, "claude› ")
	s.send(t, "/execute\r")
	s.until(t, "run this? [y/N/e] ")
	s.send(t, "y\r")
	s.until(t, "big.txt  +100 (new file)")
	s.send(t, "/diff\r")
	s.until(t, "diff: the changes of codex /execute")
	var paged []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if paged, _ = os.ReadFile(pager + ".out"); strings.Contains(string(paged), "+line 99\n") {
			break
		}
	}
	if !strings.Contains(string(paged), "+line 0\n") || !strings.Contains(string(paged), "+line 99\n") {
		t.Fatalf("the pager got %q", paged)
	}
	// The prompt is back after the pager: keys typed before it would reach
	// the terminal while the pager has it, and are flushed on the way back.
	s.until(t, "claude› ")
	s.send(t, "/status\r")
	s.until(t, "last run: codex /execute")
	if strings.Contains(s.String(), "+line 50") {
		t.Fatalf("the paged diff was printed too:\n%s", s.String())
	}
}

func TestPTYContinuationLines(t *testing.T) {
	fr := &fakeRunner{}
	p := startInProcess(t, fr, func(string) string { return "" })
	p.until(t, "claude› ")
	p.send(t, "line one\\\r")
	p.until(t, "… ")
	p.send(t, "line two\x1b\r") // Alt-Enter
	p.until(t, "… ")
	p.send(t, "line three\r")
	p.until(t, "│ line one")
	p.until(t, "│ line two")
	p.until(t, "│ line three")
	p.until(t, "run this? [y/N/e] ")
	p.send(t, "n\r")
	p.until(t, "claude› ")
	p.send(t, "\x04")
	if fr.runs() != 0 {
		t.Fatal("ran")
	}
}
