package main

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"

	"github.com/relay-baton/relay-baton/server"
)

var serveCommand = &command{
	Name:  "serve",
	Usage: "[--port N] [--open] [--workspace DIR]",
	Short: "Serve the localhost chat panel for this workspace's Claude Code sessions",
	Long: `Serves a chat panel at http://127.0.0.1:PORT/ (default 4181): pick a session, type a
message, and its reply streams back on the page. Messages go through the same
session-chat inbox as 'relay-baton send' and the room, so all of them can run at
once without losing or duplicating a message.

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
	h := server.New(b, actual)
	h.SetLog(inv.IO.Err)
	err = server.Serve(inv.Ctx, ln, h)
	b.Wait()
	return err
}
