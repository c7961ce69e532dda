package server

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	// Desk hosts the Agent Room's engine for the page's composer (main
	// passes room.Host in); close is called when serve ends. When it
	// fails, the page shows the room without driving it.
	Desk func(ctx context.Context, workspace string) (d Desk, close func(), err error)
	Out  io.Writer // the page's address, with its secret
	Log  io.Writer // requests and notes (never the secret)
}

// ServeWorkspace serves the workspace's page on 127.0.0.1 until ctx ends,
// then waits for the replies it is still recording.
func ServeWorkspace(ctx context.Context, o ServeOptions) error {
	ln, err := Listen(o.Port)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	b := NewWorkspace(ctx, o.Workspace)
	srv := New(b, port)
	srv.SetLog(o.Log)
	fmt.Fprintf(o.Out, "relay-baton serve: %s  (workspace %s)\nCtrl-C stops it. The address carries this start's secret: anyone with it can read and send as you.\n", srv.URL(), o.Workspace)
	if o.Open {
		if done, err := openPage(srv); err != nil {
			fmt.Fprintf(o.Log, "relay-baton: --open: %v; open the address above yourself\n", err)
		} else {
			defer done()
			go func() {
				select { // the browser has the cookie: the file is not needed any more
				case <-srv.redeemed:
				case <-ctx.Done():
				}
				done()
			}()
		}
	}
	if o.Room != nil {
		if r, err := o.Room(o.Workspace); err == nil {
			srv.SetRoom(r)
			// The context panel's first answer reads the log to its end
			// once (a resume's reading; later answers read only what was
			// appended): done now, while nobody waits, rather than when
			// the page first asks.
			go func() { _, _ = r.Context(ctx) }()
		} else {
			fmt.Fprintf(o.Log, "relay-baton serve: no Agent Room timeline (%v); the chat panel works without it\n", err)
		}
	}
	if o.Desk != nil && srv.room != nil {
		if d, closeDesk, err := o.Desk(ctx, o.Workspace); err == nil {
			srv.SetDesk(d)
			defer closeDesk()
		} else {
			fmt.Fprintf(o.Log, "relay-baton serve: the page cannot run the room's commands (%v); it shows the room, and relay-baton chat runs them\n", err)
		}
	}
	err = Serve(ctx, ln, srv)
	b.Wait()
	return err
}

// openPage opens the page in the default browser without putting the
// secret on a command line (any account can read another's command lines,
// /proc/PID/cmdline): the opener gets the path of a file only this user can
// read (0600 in a 0700 folder) that sends the browser on to the address
// with the secret. done removes the file (after the browser brought the
// secret, or when serve ends).
func openPage(srv *Server) (done func(), err error) {
	name, args := browserOpener(runtime.GOOS)
	p, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("no %s here", name)
	}
	dir, err := os.MkdirTemp("", "relay-baton-open-")
	if err != nil {
		return nil, err
	}
	remove := func() { os.RemoveAll(dir) }
	file := filepath.Join(dir, "open.html")
	u := html.EscapeString(srv.URL())
	page := `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0;url=` + u + `"><title>relay-baton</title></head>` +
		`<body><a href="` + u + `">Open the relay-baton page</a></body></html>` + "\n"
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		remove()
		return nil, err
	}
	cmd := exec.Command(p, append(args, file)...)
	if err := cmd.Start(); err != nil {
		remove()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go cmd.Wait() // reap it: serve runs long after the opener exits
	return remove, nil
}
