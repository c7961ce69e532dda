// Package serve holds `relay-baton serve`: its row of the command table,
// its flags and its Run, binding the page (package server) to the room's
// view and engine.
package serve

import (
	"context"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/server"
	"github.com/relay-baton/relay-baton/workspace"
)

// roomView adapts room.View to the page's Room: the context panel's facts
// come from the same code as the terminal's panel.
type roomView struct{ *room.View }

func (v roomView) Context(ctx context.Context) (any, error) { return v.Page(ctx) }

// roomDesk adapts room.Host, the engine hosted for the page, to the
// page's Desk: the composer runs the room's own commands.
type roomDesk struct{ *room.Host }

func (d roomDesk) State() any { return d.Host.State() }

func (d roomDesk) Follow(ctx context.Context, from int64, fn func([]server.DeskOutput, any)) error {
	return d.Host.Follow(ctx, from, func(out []room.HostOutput, st room.HostState) {
		o := make([]server.DeskOutput, len(out))
		for i, x := range out {
			o[i] = server.DeskOutput{Seq: x.Seq, Text: x.Text, Kind: x.Kind}
		}
		fn(o, st)
	})
}

// Serve is its command's row of the table (usage, help) and its Run.
var Serve = &cli.Command{
	Entry: cli.Entry{Name: "serve", Usage: "[--port N] [--open] [--path DIR]", Short: "Serve the room's second screen (timeline, context, composer, chat) on localhost, behind a per-start secret"},
	Long: `Serves the workspace's page at http://127.0.0.1:PORT/ (default 4181): the Agent
Room's timeline (conversation.jsonl, live, grouped by turn, filterable by role and
kind, with plan.md, handoff.md, review.md and saved prompts opened read-only), the
room's context panel (active agent, plan age and gate, budget, changed files, last
run, the orchestrator's queue), and a chat with a running Claude Code session: pick
a session, type a message, and its reply streams back on the page. Messages go
through the same session-chat inbox as 'relay-baton send' and the room, so all of
them can run at once without losing or duplicating a message.

Inside a git repository the page is also a second room: its composer takes what
the room's prompt takes (text for the active agent, /plan, /execute, /continue,
/review, /status, ...), run by the same engine. An agent starts only after its
preview, the one the terminal shows, is confirmed with Run; the click names the
preview (its id and a hash of what was shown), and a stale one (plan.md or HEAD
changed) is refused and previewed again. Cancel runs nothing; Stop ends a run as
Ctrl-C does. /apply and /undo stay in the terminal room (relay-baton chat). One
agent run at a time per repository, whichever screen starts it: the other says
which run (pid, command, screen) holds .ai-session/run.lock.

Each start makes a new secret and prints the page's address with it,
http://127.0.0.1:PORT/?token=SECRET: open that whole address (--open does, through
a file only you can read, so the secret is on no command line). The first load
keeps the secret in a cookie (HttpOnly, SameSite=Strict) and drops it from the
address. Every route, the page and every /api/ read, stream and post, answers 401
without it, so other accounts on this machine, which reach 127.0.0.1 too, can
neither read the chat nor send as you. Scripts pass it as
'Authorization: Bearer SECRET' or ?token=SECRET. It is never logged.

The server listens on 127.0.0.1 only (there is no host option), answers only
its own page (every /api/ request from another site's page, reads and streams
included, is refused 403, with the cookie or not), refuses non-JSON posts and
bodies slower than 10 s, and is not a daemon: it runs until Ctrl-C; the next
start has a new secret. Sessions become chat-capable once they start with the
hooks installed ('relay-baton hook install').`,
	Run: runServe,
}

func runServe(inv *cli.Invocation) error {
	fs := inv.Flags()
	port := fs.Int("port", server.DefaultPort, "the port on 127.0.0.1 (0 picks a free one)")
	open := fs.Bool("open", false, "open the page, with its secret, in the default browser (xdg-open; open on macOS; through a file only you can read, never on a command line)")
	// --path, as the room's commands call it (and as "not inside a git
	// repository ... pass --path" says); --workspace, the lane commands'
	// name, is kept as an alias.
	wsFlag := fs.String("path", "", "the workspace (default: nearest folder with .claude/session-chat, else the git root, else the current folder)")
	fs.StringVar(wsFlag, "workspace", "", "the same as --path")
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("serve takes no arguments, got %q", fs.Arg(0))
	}
	if *port < 0 || *port > 65535 {
		return cli.Usagef("--port must be between 0 and 65535")
	}
	ws, err := workspace.For(*wsFlag)
	if err != nil {
		return err
	}
	var view *room.View // the context panel's, shared with the page's room: the log is read once
	return server.ServeWorkspace(inv.Ctx, server.ServeOptions{Workspace: ws, Port: *port, Open: *open, Out: inv.IO.Out, Log: inv.IO.Err,
		Room: func(ws string) (server.Room, error) {
			v, err := room.OpenView(ws, "")
			if err != nil {
				return nil, err
			}
			view = v
			return roomView{v}, nil
		},
		Desk: func(ctx context.Context, ws string) (server.Desk, func(), error) {
			h, err := room.NewHost(ctx, room.Config{Dir: ws}, view)
			if err != nil {
				return nil, nil, err
			}
			return roomDesk{h}, func() { h.Close() }, nil
		}})
}
