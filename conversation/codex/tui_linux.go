//go:build linux && !portable

package codex

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/relay-baton/relay-baton/conversation/sessionid"
	"github.com/relay-baton/relay-baton/filelock"
	"github.com/relay-baton/relay-baton/procfacts"
)

// TUIGone reports whether thread id is held only by a codex
// app-server daemon, with no codex TUI left to show it (measured with
// 0.171.0): the TUI runs its thread on a managed app-server daemon, which
// holds the thread's writer lock and outlives the TUI, keeping the thread
// loaded for a minute or so after /quit. The lock's holder comes from
// /proc/locks; when it is an app-server, a TUI shows the thread while a
// codex process with a terminal (not an app-server, exec or queue run)
// runs in the thread's folder (cwd).
func TUIGone(id, cwd string) bool {
	home := Home()
	if home == "" || !sessionid.IsUUID(id) {
		return false
	}
	fi, err := os.Lstat(filepath.Join(home, "thread-writer-locks", id+".lock"))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	holder := filelock.WriterPID(fi)
	if holder <= 0 {
		return false
	}
	args, err := procfacts.System.Cmdline(holder)
	if err != nil || !hasArg(args, "app-server") {
		return false // the TUI (or an exec run) holds it itself
	}
	if cwd == "" {
		return false // nothing to look for a TUI by: leave it live
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == holder {
			continue
		}
		if codexTUIIn(pid, cwd) {
			return false
		}
	}
	return true
}

// codexTUIIn reports whether process pid is a codex TUI (the npm wrapper
// or the native binary) with a controlling terminal, working in cwd.
func codexTUIIn(pid int, cwd string) bool {
	args, err := procfacts.System.Cmdline(pid)
	if err != nil || len(args) == 0 {
		return false
	}
	codex := filepath.Base(args[0]) == "codex" || len(args) > 1 && filepath.Base(args[0]) == "node" && filepath.Base(args[1]) == "codex"
	if !codex || hasArg(args, "app-server") || hasArg(args, "exec") || hasArg(args, "e") || hasArg(args, "queue") {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The fields after the command's closing parenthesis: state, ppid,
	// pgrp, session, tty_nr.
	rest := string(stat)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 5 || f[4] == "0" {
		return false // no terminal: nobody sees it
	}
	dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	return err == nil && filepath.Clean(dir) == filepath.Clean(cwd)
}

func hasArg(args []string, a string) bool {
	for _, x := range args[1:] {
		if x == a {
			return true
		}
	}
	return false
}
