package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A page on another site must not read the API nor fill the live streams:
// every /api/ route, GET included, answers 403 to a foreign Origin or a
// cross-site Sec-Fetch-Site, before it takes a stream slot.
func TestCrossSiteReadsRefused(t *testing.T) {
	_, _, base := newTest(t)
	get := func(path string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	foreign := []map[string]string{
		{"Origin": "https://evil.example"},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
	}
	for _, path := range []string{"/api/targets", "/api/log?session=" + sid, "/api/events?session=" + sid, "/api/timeline", "/api/context", "/api/room/stream", "/api/ref?path=x"} {
		for _, h := range foreign {
			if resp := get(path, h); resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s with %v: %d, want 403", path, h, resp.StatusCode)
			}
		}
	}
	// More foreign streams than there are slots: the user's own page still
	// gets one.
	for range MaxSSEClients + 4 {
		if resp := get("/api/events?session="+sid, map[string]string{"Origin": "https://evil.example"}); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("foreign stream: %d", resp.StatusCode)
		}
	}
	for _, h := range []map[string]string{{"Origin": base, "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {}} {
		if resp := get("/api/events?session="+sid, h); resp.StatusCode != http.StatusOK {
			t.Fatalf("own stream with %v: %d, want 200", h, resp.StatusCode)
		}
	}
	if resp := get("/", map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusOK {
		t.Errorf("the page itself, opened from a link elsewhere: %d", resp.StatusCode)
	}
}

// A request body that trickles is cut off at the body timeout: the
// connection is closed, not held.
func TestSlowBodyClosed(t *testing.T) {
	fb := &fakeBackend{watch: make(chan Event, 8)}
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := New(fb, port)
	s.bodyTimeout = 200 * time.Millisecond
	s.SetLog(nil)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { Serve(ctx, ln, s); close(served) }()
	t.Cleanup(func() { cancel(); <-served })

	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host := "127.0.0.1:" + strconv.Itoa(port)
	io.WriteString(c, "POST /api/send HTTP/1.1\r\nHost: "+host+"\r\nOrigin: http://"+host+"\r\nAuthorization: Bearer "+s.Token()+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"session\":")
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard only: the server closes long before
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "body") {
			t.Fatalf("slow body: %d %s, want 408 naming the body", resp.StatusCode, b)
		}
		return
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server held a slow body open")
	}
}
