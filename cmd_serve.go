package main

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"

	"context"

	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/server"
)

// roomView adapts room.View to the page's Room: the context panel's facts
// come from the same code as the terminal's panel.
type roomView struct{ *room.View }

func (v roomView) Context(ctx context.Context) (any, error) { return v.Panel(ctx) }

var serveCommand = &command{
	Name:  "serve",
	Usage: "[--port N] [--open] [--workspace DIR]",
	Short: "Serve the room's second screen: timeline, context and chat, on localhost",
	Long: `Serves the workspace's page at http://127.0.0.1:PORT/ (default 4181): the Agent
Room's timeline (conversation.jsonl, live, grouped by turn, filterable by role and
kind, with plan.md, handoff.md, review.md and saved prompts opened read-only), the
room's context panel (active agent, plan age and gate, budget, changed files, last
run, the orchestrator's queue), and a chat with a running Claude Code session: pick
a session, type a message, and its reply streams back on the page. Messages go
through the same session-chat inbox as 'relay-baton send' and the room, so all of
them can run at once without losing or duplicating a message.

The page is read-only for agent runs: nothing on it starts an agent or answers a
confirmation; approvals stay in the terminal.

The server listens on 127.0.0.1 only (there is no host option), refuses
cross-origin and non-JSON posts, ships no secret in the page, and is not a
daemon: it runs until Ctrl-C. Sessions become chat-capable once they start
with the hooks installed ('relay-baton hook install').`,
	Run: runServe,
}

func runServe(inv *invocation) error {
	fs := inv.flags()
	port := fs.Int("port", server.DefaultPort, "the port on 127.0.0.1 (0 picks a free one)")
	open := fs.Bool("open", false, "open the page in the default browser (xdg-open)")
	wsFlag := workspaceFlag(fs)
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments, got %q", fs.Arg(0))
	}
	if *port < 0 || *port > 65535 {
		return usagef("--port must be between 0 and 65535")
	}
	ws, err := resolveWorkspace(*wsFlag)
	if err != nil {
		return err
	}
	ln, err := server.Listen(*port)
	if err != nil {
		return err
	}
	actual := ln.Addr().(*net.TCPAddr).Port
	url := "http://127.0.0.1:" + strconv.Itoa(actual) + "/"
	fmt.Fprintf(inv.IO.Out, "relay-baton serve: %s  (workspace %s)\nCtrl-C stops it.\n", url, ws)
	if *open {
		if p, err := exec.LookPath("xdg-open"); err == nil {
			if cmd := exec.Command(p, url); cmd.Start() == nil {
				go cmd.Wait() // reap it: serve runs long after xdg-open exits
			}
		} else {
			fmt.Fprintf(inv.IO.Err, "relay-baton: --open: no xdg-open here; open %s yourself\n", url)
		}
	}
	b := server.NewWorkspace(inv.Ctx, ws)
	srv := server.New(b, actual)
	srv.SetLog(inv.IO.Err)
	if v, err := room.OpenView(ws, ""); err == nil {
		srv.SetRoom(roomView{v})
	} else {
		fmt.Fprintf(inv.IO.Err, "relay-baton serve: no Agent Room timeline (%v); the chat panel works without it\n", err)
	}
	err = server.Serve(inv.Ctx, ln, srv)
	b.Wait()
	return err
}
