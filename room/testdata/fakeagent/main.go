// Command fakeagent stands in for the claude and codex CLIs in the room's
// pseudo-terminal tests (RELAY_BATON_CLAUDE / RELAY_BATON_CODEX point at
// it). It prints the CLI's JSON lines (codex when argv holds "exec", claude
// stream-json otherwise), starts a grandchild `sleep` so that tests can
// check the whole tree dies on Ctrl-C, records pids in $FAKE_AGENT_PIDS and
// sleeps $FAKE_AGENT_SLEEP seconds before finishing. As codex, it writes
// the file $FAKE_AGENT_WRITE when set (an executor's change).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

func main() {
	codex := slices.Contains(os.Args, "exec")
	sleep, _ := strconv.ParseFloat(os.Getenv("FAKE_AGENT_SLEEP"), 64)
	child := exec.Command("sleep", "60")
	child.Start()
	if p := os.Getenv("FAKE_AGENT_PIDS"); p != "" {
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		fmt.Fprintf(f, "%d\n%d\n", os.Getpid(), child.Process.Pid)
		f.Close()
	}
	if codex {
		fmt.Println(`{"type":"thread.started","thread_id":"t1"}`)
		fmt.Println(`{"type":"turn.started"}`)
		fmt.Println(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'ls'","status":"in_progress"}}`)
	} else {
		fmt.Println(`{"type":"system","subtype":"init","session_id":"s1","cwd":"."}`)
		fmt.Println(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls","description":"List files"}}]}}`)
	}
	time.Sleep(time.Duration(sleep * float64(time.Second)))
	child.Process.Kill()
	if w := os.Getenv("FAKE_AGENT_WRITE"); w != "" && codex {
		os.WriteFile(w, []byte("changed by the fake codex\n"), 0o644)
	}
	if codex {
		fmt.Println(`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"## Goal\nfake"}}`)
		fmt.Println(`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}`)
	} else {
		fmt.Println(`{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"## Goal\nfake plan"}],"stop_reason":"end_turn"}}`)
		fmt.Println(`{"type":"result","subtype":"success","result":"## Goal\nfake plan","session_id":"s1","total_cost_usd":0.001,"is_error":false}`)
	}
}
