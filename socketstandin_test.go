package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// standInSocket makes a session's messaging socket that takes each post
// and shows nothing (drop), or a socket file nobody listens on (refuse).
func standInSocket(t *testing.T, drop bool) (path string, posts chan string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sock") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	posts = make(chan string, 16)
	if !drop {
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		return path, posts
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			sc.Buffer(nil, 1<<20)
			var all strings.Builder
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
			}
			c.Close()
			posts <- all.String()
		}
	}()
	return path, posts
}

// waitOutput waits until the process's output holds want (a hang guard:
// each step comes within the claim grace).
func waitOutput(t *testing.T, p *rbProc, want string) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); !strings.Contains(p.out.String()+p.err.String(), want); time.Sleep(20 * time.Millisecond) {
		select {
		case <-p.done:
			if strings.Contains(p.out.String()+p.err.String(), want) {
				return
			}
			t.Fatalf("relay-baton exited %d before saying %q:\n%s\n%s", p.code, want, p.out.String(), p.err.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay-baton never said %q:\n%s\n%s", want, p.out.String(), p.err.String())
		}
	}
}
