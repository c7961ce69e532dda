package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"strconv"
)

// ServeOptions say what `relay-baton serve` serves.
type ServeOptions struct {
	Workspace string
	Port      int  // on 127.0.0.1; 0 picks a free one
	Open      bool // open the page in the default browser (browserOpener)
	// Room opens the Agent Room's side of the page (timeline, context) for
	// the workspace; when it fails, the chat panel works without it. main
	// passes room.View in: nothing here imports room.
	Room func(workspace string) (Room, error)
	Out  io.Writer // the page's address
	Log  io.Writer // requests and notes
}

// ServeWorkspace serves the workspace's page on 127.0.0.1 until ctx ends,
// then waits for the replies it is still recording.
func ServeWorkspace(ctx context.Context, o ServeOptions) error {
	ln, err := Listen(o.Port)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	fmt.Fprintf(o.Out, "relay-baton serve: %s  (workspace %s)\nCtrl-C stops it.\n", url, o.Workspace)
	if o.Open {
		name, args := browserOpener(runtime.GOOS)
		if p, err := exec.LookPath(name); err == nil {
			if cmd := exec.Command(p, append(args, url)...); cmd.Start() == nil {
				go cmd.Wait() // reap it: serve runs long after the opener exits
			}
		} else {
			fmt.Fprintf(o.Log, "relay-baton: --open: no %s here; open %s yourself\n", name, url)
		}
	}
	b := NewWorkspace(ctx, o.Workspace)
	srv := New(b, port)
	srv.SetLog(o.Log)
	if o.Room != nil {
		if r, err := o.Room(o.Workspace); err == nil {
			srv.SetRoom(r)
		} else {
			fmt.Fprintf(o.Log, "relay-baton serve: no Agent Room timeline (%v); the chat panel works without it\n", err)
		}
	}
	err = Serve(ctx, ln, srv)
	b.Wait()
	return err
}
