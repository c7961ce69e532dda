package main

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
	return server.ServeWorkspace(inv.Ctx, server.ServeOptions{Workspace: ws, Port: *port, Open: *open, Out: inv.IO.Out, Log: inv.IO.Err,
		Room: func(ws string) (server.Room, error) {
			v, err := room.OpenView(ws, "")
			if err != nil {
				return nil, err
			}
			return roomView{v}, nil
		},
		Desk: func(ctx context.Context, ws string) (server.Desk, func(), error) {
			h, err := room.NewHost(ctx, room.Config{Dir: ws})
			if err != nil {
				return nil, nil, err
			}
			return roomDesk{h}, func() { h.Close() }, nil
		}})
}
