// Package lane holds the orchestrator lane's commands: send, targets,
// tail, wait and the Claude Code hooks (stop, wait, prompt-submit,
// session-start, install), each its row of the command table (help and
// usage), its flags and its Run. The protocol itself lives in
// conversation.
package lane

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/view"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/workspace"
)

func workspaceFlag(fs *pflag.FlagSet) *string {
	return fs.String("workspace", "", "the workspace (default: nearest folder with .claude/session-chat, else the git root, else the current folder)")
}

// warnPlanted prints, on standard error, what a clone committed into
// relay-baton's folders of ws (ignored) and any .gitignore there it could
// not repair.
func warnPlanted(inv *cli.Invocation, ws string) {
	for _, w := range workspace.PlantedWarnings(ws) {
		fmt.Fprintf(inv.IO.Err, "relay-baton: warning: %s\n", render.InertLine(w))
	}
}

// pickSession resolves --session / --lead to a session id.
func pickSession(ctx context.Context, ws, id string, lead bool) (string, error) {
	if id != "" && lead {
		return "", cli.Usagef("give --session or --lead, not both")
	}
	return sessionUsage(view.PickSession(ctx, ws, id))
}

// sessionUsage makes a session id that is malformed, or a prefix that
// matches no session or several, a usage error.
func sessionUsage(id string, err error) (string, error) {
	if errors.Is(err, conversation.ErrBadSessionID) || errors.Is(err, view.ErrUnknownSession) || errors.Is(err, view.ErrAmbiguousSession) {
		return "", &cli.UsageError{Msg: err.Error(), Hint: "relay-baton targets"}
	}
	return id, err
}
