// Command bench measures relay-baton side by side with a reference doing the
// same work, in one run, and prints a table of medians and ratios.
//
//	go run ./bench            # everything (about 5 minutes; needs jq, python3)
//	go run ./bench -quick     # smaller sizes, skips the 1 GB transcript
//	go run ./bench -only hook,idle
//
// It builds relay-baton into a temporary folder, works only in temporary
// folders, and writes the table to stdout and to bench/out/results.md.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

var (
	quick = flag.Bool("quick", false, "smaller sizes; skip the 1 GB transcript")
	only  = flag.String("only", "", "comma-separated subset: hook,idle,rewake,scan,follow,claim,replay,start,noop")
	outMD = flag.String("out", "bench/out/results.md", "where to write the markdown table (\"\" = nowhere)")
)

// row is one line of the results table.
type row struct {
	Name, Ours, Ref, Ratio, Target, Verdict string
}

var rows []row

func add(r row) {
	rows = append(rows, r)
	fmt.Fprintf(os.Stderr, "  %-44s ours %-22s ref %-22s %s %s\n", r.Name, r.Ours, r.Ref, r.Ratio, r.Verdict)
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func want(name string) bool {
	if *only == "" {
		return true
	}
	for _, n := range strings.Split(*only, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

func run() error {
	tmp, err := os.MkdirTemp("", "relay-baton-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "relay-baton")
	fmt.Fprintln(os.Stderr, "building relay-baton ...")
	build := exec.Command("go", "build", "-o", bin, ".")
	// Static, as .goreleaser.yaml builds the release binaries: a default
	// build links libc for the net package's cgo resolver, and the dynamic
	// loader adds about a millisecond to every process start (every hook).
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	refDir, err := filepath.Abs("bench/reference")
	if err != nil {
		return err
	}
	b := &bench{bin: bin, tmp: tmp, ref: refDir}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"hook", b.hookStop},
		{"idle", b.idleWait},
		{"rewake", b.rewake},
		{"scan", b.scan},
		{"follow", b.follow},
		{"claim", b.claim},
		{"replay", b.replay},
		{"start", b.start},
		{"noop", b.noop},
	}
	for _, s := range steps {
		if !want(s.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	table := render()
	fmt.Print(table)
	if *outMD != "" {
		_ = os.MkdirAll(filepath.Dir(*outMD), 0o755)
		if err := os.WriteFile(*outMD, []byte(table), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func render() string {
	var sb strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&sb, "Measured %s on %s/%s, %d cores (%s), %s.\n\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), host)
	sb.WriteString("| benchmark | relay-baton | reference | ratio | target | met |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", r.Name, r.Ours, r.Ref, r.Ratio, r.Target, r.Verdict)
	}
	return sb.String()
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown cpu"
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown cpu"
}

// --- statistics ---

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func ms(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// --- process helpers ---

type bench struct {
	bin, tmp, ref string
}

// peakRSS runs a command once under GNU time and returns its peak RSS.
// (The rusage a Go parent gets is no good for this: the child is cloned
// sharing the parent's memory until exec, and Linux carries that
// high-water mark into the child's ru_maxrss, so every child would show at
// least the benchmark's own size.)
func peakRSS(dir string, name string, args ...string) (int64, error) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0, fmt.Errorf("peak RSS needs GNU time at /usr/bin/time (apt-get install time)")
	}
	f, err := os.CreateTemp("", "rss-")
	if err != nil {
		return 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	if _, _, err := runOnce(nil, nil, dir, "/usr/bin/time", append([]string{"-f", "%M", "-o", f.Name(), name}, args...)...); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return 0, err
	}
	var kb int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &kb); err != nil {
		return 0, fmt.Errorf("GNU time said %q", b)
	}
	return kb * 1024, nil
}

// lastCPU is the user + system CPU time of the last command runOnce ran:
// on a loaded machine wall times move with the load, CPU times much less.
var lastCPU time.Duration

// runOnce runs a command to completion and returns its wall time and its
// ru_maxrss (see peakRSS for why that is not the peak RSS).
func runOnce(stdin io.Reader, env []string, dir string, name string, args ...string) (time.Duration, int64, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdin = stdin
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	start := time.Now()
	err := cmd.Run()
	el := time.Since(start)
	if cmd.ProcessState != nil {
		lastCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	rss := maxRSS(cmd.ProcessState)
	if err != nil {
		return el, rss, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return el, rss, nil
}

// stamped is one stdout line and when it arrived.
type stamped struct {
	at   time.Time
	line string
}

// lineReader starts cmd and returns a channel that receives each stdout
// line with its arrival time.
func lineReader(ctx context.Context, cmd *exec.Cmd) (<-chan stamped, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ch := make(chan stamped, 1024)
	go func() {
		defer close(ch)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			l, err := r.ReadSlice('\n')
			if err != nil && err != bufio.ErrBufferFull {
				return
			}
			select {
			case ch <- stamped{time.Now(), string(l)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
