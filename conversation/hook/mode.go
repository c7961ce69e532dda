package hook

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/procfacts"
)

// SessionMode is how the Claude Code session running a hook takes its
// input, which decides whether the chat hooks can serve it.
type SessionMode string

// The session modes a hook tells apart.
const (
	// ModeInteractive is the TUI: asyncRewake hooks run in the background
	// and wake it while idle.
	ModeInteractive SessionMode = "interactive"
	// ModeStreamJSON is `claude -p --input-format stream-json`: long-lived,
	// reads turns on stdin; asyncRewake hooks run in the background.
	ModeStreamJSON SessionMode = "stream-json"
	// ModePrint is a one-shot `claude -p` (also with --resume or
	// --continue): it cannot be woken, it runs a SessionStart asyncRewake
	// hook in the foreground before its first request, and it does not
	// exit while a Stop asyncRewake hook runs.
	ModePrint SessionMode = "print"
	// ModeAgentRun is one of relay-baton's own agent runs
	// (agents.AgentRunEnv is set): always a print-mode run.
	ModeAgentRun SessionMode = "agent-run"
	// ModeManual: the hook was not started by Claude Code (no CLAUDE_*
	// variable): a person or a test ran it by hand, with a payload.
	ModeManual SessionMode = "manual"
)

// Env is what a hook knows about the session that runs it.
type Env struct {
	Mode    SessionMode
	Process procfacts.Process // the session's process (zero when unknown)
	Why     string            // how the mode was decided, in a few words
}

// Serves reports whether relay-baton's hooks act for this session: they
// return at once, doing nothing, for sessions that cannot be woken
// (one-shot print mode) and for relay-baton's own agent runs, which must
// never stall on a waiter nor be registered as chat targets.
func (h Env) Serves() bool {
	switch h.Mode {
	case ModeInteractive, ModeStreamJSON, ModeManual:
		return true
	}
	return false
}

// Current inspects this process's environment and the session's
// process (CLAUDE_PID, else the parent of the hook's shell) on this
// machine.
func Current() Env {
	return Detect(os.Getenv, procfacts.System, os.Getppid())
}

// Skip is the first thing every relay-baton hook does: when the
// session is not one the hooks serve (see Env.Serves) it drains the
// payload from in (so Claude Code's write of it never fails) and reports
// true; the hook then exits 0 at once, printing nothing.
func Skip(h Env, in io.Reader) bool {
	if h.Serves() {
		return false
	}
	if in != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(in, 64<<20))
	}
	return true
}

// Detect decides the mode of the session running a hook from the hook's
// environment (getenv) and the session's process (src; ppid is the hook's
// parent, used when CLAUDE_PID is unset). The rules, in order:
//
//  1. agents.AgentRunEnv=1 (inherited from relay-baton's agent runs):
//     ModeAgentRun.
//  2. No CLAUDE_PID, CLAUDECODE nor CLAUDE_CODE_ENTRYPOINT: ModeManual.
//  3. The session's argv, when it can be read (src.Cmdline: /proc on
//     Linux, kern.procargs2 on macOS, ps elsewhere): -p or
//     --print (alone or in a short-flag group such as -cp) without
//     --input-format stream-json is ModePrint; with it, ModeStreamJSON; no
//     print flag, ModeInteractive.
//  4. Otherwise the environment: CLAUDE_CODE_ENTRYPOINT=sdk-cli or
//     CLAUDE_CODE_SESSION_ATTENDED=0 (both print modes set them, so the
//     two cannot be told apart) is taken as ModePrint, the safe side: a
//     stream-json session then loses the chat, but nothing stalls.
//     Anything else is ModeInteractive.
func Detect(getenv func(string) string, src procfacts.Source, ppid int) Env {
	if getenv(agents.AgentRunEnv) == "1" {
		return Env{Mode: ModeAgentRun, Why: agents.AgentRunEnv + "=1: one of relay-baton's own agent runs"}
	}
	entry, attended := getenv("CLAUDE_CODE_ENTRYPOINT"), getenv("CLAUDE_CODE_SESSION_ATTENDED")
	pidVar := getenv("CLAUDE_PID")
	if pidVar == "" && entry == "" && getenv("CLAUDECODE") == "" {
		return Env{Mode: ModeManual, Why: "not run by Claude Code"}
	}
	pid, _ := strconv.Atoi(pidVar)
	if pid <= 0 {
		pid = sessionPidFromParent(src, ppid)
	}
	h := Env{Process: procfacts.Identify(src, pid)}
	if pid > 0 {
		if argv, err := src.Cmdline(pid); err == nil && len(argv) > 0 {
			h.Mode = ModeFromArgv(argv)
			h.Why = "argv of process " + strconv.Itoa(pid)
			return h
		}
	}
	if entry == "sdk-cli" || attended == "0" {
		h.Mode, h.Why = ModePrint, "argv unreadable; CLAUDE_CODE_ENTRYPOINT="+entry+" CLAUDE_CODE_SESSION_ATTENDED="+attended+" (a print mode)"
		return h
	}
	h.Mode, h.Why = ModeInteractive, "argv unreadable; CLAUDE_CODE_ENTRYPOINT="+entry
	return h
}

// sessionPidFromParent finds the session's process without CLAUDE_PID:
// Claude Code runs a hook command through a shell, so it is the shell's
// parent when the hook's parent is a shell, else the parent itself.
func sessionPidFromParent(src procfacts.Source, ppid int) int {
	if ppid <= 1 {
		return 0
	}
	st, err := src.Stat(ppid)
	if err != nil {
		return 0
	}
	switch st.Comm {
	case "sh", "bash", "dash", "zsh", "ash", "busybox":
		if st.PPID > 1 {
			return st.PPID
		}
		return 0
	}
	return ppid
}

// claudeShort are Claude Code's short options (2.1.328): true for those
// that take a value (required or optional), which then ends a short-flag
// group ("-rp" is --resume p).
var claudeShort = map[byte]bool{'c': false, 'h': false, 'p': false, 'v': false, 'd': true, 'n': true, 'r': true, 'w': true}

// ModeFromArgv tells the mode of a Claude Code process from its argv: the
// print flag (-p, --print, or p in a group of short flags) and the input
// format. Options end at "--". When argv[0] is a JavaScript runtime (an
// npm install run by node), its own options and the script are skipped.
func ModeFromArgv(argv []string) SessionMode {
	args := argv[1:]
	switch strings.TrimSuffix(filepath.Base(argv[0]), ".exe") {
	case "node", "nodejs", "bun", "deno":
		for i, a := range args {
			if !strings.HasPrefix(a, "-") {
				args = args[i+1:]
				break
			}
		}
	}
	print, stream := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--print":
			print = true
		case a == "--input-format":
			if i+1 < len(args) {
				i++
				stream = args[i] == "stream-json"
			}
		case strings.HasPrefix(a, "--input-format="):
			stream = strings.TrimPrefix(a, "--input-format=") == "stream-json"
		case len(a) >= 2 && a[0] == '-' && a[1] != '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				if c == 'p' {
					print = true
				}
				if claudeShort[c] {
					break // the rest of the group is this option's value
				}
			}
		}
	}
	switch {
	case print && stream:
		return ModeStreamJSON
	case print:
		return ModePrint
	}
	return ModeInteractive
}
