package chatlane

import (
	"context"
	"path/filepath"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/claudecode"
	"github.com/relay-baton/relay-baton/conversation/codex"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// hooksInstalled names the agents whose relay-baton chat hooks are
// installed for the workspace ws: Claude Code's in the project, local or
// user settings, Codex's in $CODEX_HOME/hooks.json or the workspace's
// .codex/hooks.json. Read only, never through a FIFO (safeio.ReadRegular).
func hooksInstalled(ws string) (claude, codexHooks bool) {
	has := func(path string) bool {
		b, err := safeio.ReadRegular(path, 16<<20)
		return err == nil && conversation.HoldsStopHook(b)
	}
	for _, scope := range []string{"project", "local", "user"} {
		if p, err := workspace.SettingsPath(scope, ws); err == nil && has(p) {
			claude = true
		}
	}
	if home := codex.Home(); home != "" && has(filepath.Join(home, "hooks.json")) {
		codexHooks = true
	}
	if has(filepath.Join(ws, ".codex", "hooks.json")) {
		codexHooks = true
	}
	return claude, codexHooks
}

// noSessionAdvice is what to do when the workspace ws has no session to
// chat with. A Claude Code session needs no hooks when Claude Code's own
// list of sessions can be read (relay-baton reaches it through its
// messaging socket); else, and for Codex, install the hooks when they are
// not, or start (or resume) a session when they are, since a closed TUI is
// all that is missing.
func noSessionAdvice(ws string) string {
	claude, codex := hooksInstalled(ws)
	codexHow := "for Codex: `relay-baton hook install --agent codex`, then start `codex` there"
	if codex {
		codexHow = "for Codex (its hooks are installed): start `codex` there, or resume a session (`codex resume`)"
	}
	_, err := claudecode.Registry(context.Background())
	if err == nil {
		return "start Claude Code there (`claude`, or `claude --resume` for an earlier session): relay-baton finds it in Claude Code's own list of sessions and reaches it through its messaging socket, no hooks needed; " + codexHow
	}
	note := "; Claude Code's list of sessions cannot be read: " + err.Error()
	switch {
	case claude && codex:
		return "relay-baton's hooks are installed: start Claude Code or Codex there (`claude`, `codex`), or resume an earlier session (`claude --resume`, `codex resume`)"
	case claude:
		return "relay-baton's hooks are installed for Claude Code: start it there (`claude`), or resume an earlier session (`claude --resume`); " + codexHow
	case codex:
		return "run `relay-baton hook install` there, then start Claude Code (sessions started before the install cannot be reached" + note + "); " + codexHow
	}
	return "run `relay-baton hook install` (for Codex: `relay-baton hook install --agent codex`) there, then start the agent (sessions started before the install cannot be reached" + note + ")"
}
