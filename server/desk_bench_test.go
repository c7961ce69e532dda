package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/room"
)

// hostDesk adapts room.Host to Desk for the tests, as main's roomDesk does.
type hostDesk struct{ *room.Host }

func (d hostDesk) State() any { return d.Host.State() }

func (d hostDesk) Follow(ctx context.Context, from int64, fn func([]DeskOutput, any)) error {
	return d.Host.Follow(ctx, from, func(out []room.HostOutput, st room.HostState) {
		o := make([]DeskOutput, len(out))
		for i, x := range out {
			o[i] = DeskOutput{Seq: x.Seq, Text: x.Text, Kind: x.Kind}
		}
		fn(o, st)
	})
}

// BenchmarkConsoleOutput: from the hosted engine printing a line (as an
// agent's activity is printed) to that line arriving at a client of
// GET /api/room/console on loopback. ns/op is the mean; p50 and p99 are
// reported too.
func BenchmarkConsoleOutput(b *testing.B) {
	dir := gitRepo(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := room.NewHost(ctx, room.Config{Dir: dir, Getenv: func(string) string { return "" }}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ln, err := Listen(0)
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := New(&fakeBackend{}, port)
	s.SetLog(nil)
	s.SetRoom(&fakeRoom{dir: filepath.Join(dir, ".ai-session"), ctx: map[string]any{}})
	s.SetDesk(hostDesk{h})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	register(b, base, s.Token())
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(sctx, ln, s); close(done) }()
	defer func() { scancel(); <-done }()

	resp, err := http.Get(base + "/api/room/console?from=0")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	seen := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: [") {
				seen <- l
			}
		}
		close(seen)
	}()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		mark := "marker-" + strconv.Itoa(i) + " "
		t0 := time.Now()
		h.Engine().Print(mark + "\n")
		for l := range seen {
			if strings.Contains(l, mark) {
				break
			}
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
