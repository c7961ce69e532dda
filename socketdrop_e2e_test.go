//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/procfacts"
)

// End to end through the Stop hook, with relay-baton's own processes: a
// session whose socket takes messages and drops them (or refuses them) is
// reached by its Stop hook. `send --follow` says the post was not a
// delivery, that the message went back to the inbox, then "delivered via
// hook" and the reply; `targets` says the socket drops messages.
func TestSendFollowThroughTheStopHookWhenTheSocketFails(t *testing.T) {
	for _, drop := range []bool{true, false} {
		name := map[bool]string{true: "drops", false: "refuses"}[drop]
		t.Run(name, func(t *testing.T) {
			t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
			ws, s := chatWorkspace(t)
			tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
			os.WriteFile(tr, nil, 0o600)
			register(t, s, tr)
			path, posts := standInSocket(t, drop)
			if err := s.RecordSocket(conversation.SocketInfo{Path: path, Token: "tok", Process: procfacts.ThisProcess()}); err != nil {
				t.Fatal(err)
			}
			env := []string{"RELAY_BATON_CLAIM_GRACE=500ms", "CLAUDE_CONFIG_DIR=" + os.Getenv("CLAUDE_CONFIG_DIR")}
			p := startRB(t, env, nil, "send", "--session", chatSID, "--workspace", ws, "--follow", "E2E-QUESTION: still there?")
			if drop {
				waitOutput(t, p, "posted to the session's messaging socket at")
				<-posts
				waitOutput(t, p, "back in the inbox, first in line, for the Stop hook and the rewake waiter")
			} else {
				waitOutput(t, p, "did not take the message")
			}
			// The session's turn ends: Claude Code runs the Stop hook.
			stop := payload(ws, `,"transcript_path":"`+tr+`","stop_hook_active":false`)
			_, out, _ := claudeStop(t, env, stop, tr, 0)
			if !strings.Contains(out, "E2E-QUESTION: still there?") {
				t.Fatalf("the Stop hook printed %q, want a block with the message", out)
			}
			waitOutput(t, p, "delivered via hook at")
			f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"HOOK-ANSWER: yes"}],"stop_reason":"end_turn"}}` + "\n")
			f.Close()
			if !p.wait(hangGuard) {
				t.Fatal("send --follow hung")
			}
			got := p.out.String()
			if p.code != 0 || !strings.Contains(got, "HOOK-ANSWER: yes") || strings.Contains(got, "delivered via socket") {
				t.Fatalf("send --follow exited %d:\n%s\n%s", p.code, got, p.err.String())
			}
			select {
			case post := <-posts:
				t.Fatalf("posted to the socket again: %q", post)
			default:
			}
			_, targets, _ := relayBaton(t, t.Context(), env, "", "targets", "--workspace", ws)
			if drop != strings.Contains(targets, "socket drops messages: delivered by hooks") {
				t.Fatalf("targets (socket %s):\n%s", name, targets)
			}
			t.Logf("send --follow (socket %s):\n%s", name, got)
		})
	}
}

// send --follow gives up with a non-zero exit and says where the message
// is when the session ends before any lane delivered it (its socket
// dropped the post, no turn ended).
func TestSendFollowGivesUpWhenNoLaneDelivered(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	ws, s := chatWorkspace(t)
	tr := filepath.Join(t.TempDir(), chatSID+".jsonl")
	os.WriteFile(tr, nil, 0o600)
	register(t, s, tr)
	session := exec.Command("sleep", "600") // the session's process
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Process.Kill(); session.Wait() })
	proc := procfacts.Identify(procfacts.System, session.Process.Pid)
	s.RecordProcess(proc)
	// The stand-in socket is served by this test's process, which the
	// socket record names (the peer check asks the kernel who listens);
	// the session's end is the sleep's.
	path, _ := standInSocket(t, true)
	s.RecordSocket(conversation.SocketInfo{Path: path, Process: procfacts.ThisProcess()})
	env := []string{"RELAY_BATON_CLAIM_GRACE=300ms", "CLAUDE_CONFIG_DIR=" + os.Getenv("CLAUDE_CONFIG_DIR")}
	p := startRB(t, env, nil, "send", "--session", chatSID, "--workspace", ws, "--follow", "anyone?")
	waitOutput(t, p, "back in the inbox")
	session.Process.Kill()
	session.Wait()
	if !p.wait(hangGuard) {
		t.Fatal("send --follow hung")
	}
	if p.code == 0 || !strings.Contains(p.err.String(), "stays queued") || strings.Contains(p.out.String(), "delivered via") {
		t.Fatalf("send --follow exited %d:\n%s\n%s", p.code, p.out.String(), p.err.String())
	}
}
