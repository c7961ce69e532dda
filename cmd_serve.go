package main

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"

	"context"

	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/room"
	"github.com/relay-baton/relay-baton/server"
)

// roomView adapts room.View to the page's Room: the context panel's facts
// come from the same code as the terminal's panel.
type roomView struct{ *room.View }

func (v roomView) Context(ctx context.Context) (any, error) { return v.Panel(ctx) }

func runServe(inv *cli.Invocation) error {
	fs := inv.Flags()
	port := fs.Int("port", server.DefaultPort, "the port on 127.0.0.1 (0 picks a free one)")
	open := fs.Bool("open", false, "open the page in the default browser (xdg-open)")
	wsFlag := workspaceFlag(fs)
	if err := inv.Parse(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("serve takes no arguments, got %q", fs.Arg(0))
	}
	if *port < 0 || *port > 65535 {
		return cli.Usagef("--port must be between 0 and 65535")
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
