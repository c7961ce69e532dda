package procfacts

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The darwin fact source's parsers run on every system, on samples built
// with the documented layouts (testdata/darwin/README.md says how).

func darwinSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "darwin", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseKinfoProc(t *testing.T) {
	b := darwinSample(t, "kinfo_proc_node.bin")
	st, err := parseKinfoProc(b, 4242)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PPID: 4100, Comm: "node", State: 'R', Start: 1764650000*1e6 + 123456}
	if st != want {
		t.Fatalf("parsed %+v, want %+v", st, want)
	}
	z, err := parseKinfoProc(darwinSample(t, "kinfo_proc_zombie.bin"), 4242)
	if err != nil || z.State != 'Z' {
		t.Fatalf("zombie: %+v %v", z, err)
	}
	// sysctl answers nothing for a pid that does not exist; another pid's
	// record is not this one's; a short answer is an error, not a process.
	if _, err := parseKinfoProc(nil, 4242); !errors.Is(err, ErrNoProcess) {
		t.Errorf("empty answer: %v", err)
	}
	if _, err := parseKinfoProc(b, 4243); !errors.Is(err, ErrNoProcess) {
		t.Errorf("another pid's record: %v", err)
	}
	if _, err := parseKinfoProc(b[:300], 4242); err == nil || errors.Is(err, ErrNoProcess) {
		t.Errorf("short answer: %v", err)
	}
}

func TestParseProcArgs2(t *testing.T) {
	argv, err := parseProcArgs2(darwinSample(t, "procargs2_claude_print.bin"))
	want := []string{"node", "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-p", "--input-format", "stream-json", "--output-format", "stream-json", `say "hi -p"`}
	if err != nil || !slices.Equal(argv, want) {
		t.Fatalf("argv %q %v, want %q (the environment after argv is not read)", argv, err, want)
	}
	argv, err = parseProcArgs2(darwinSample(t, "procargs2_claude_interactive.bin"))
	if err != nil || !slices.Equal(argv, []string{"/Users/dev/.local/bin/claude", "--resume", "0195c2d1"}) {
		t.Fatalf("argv %q %v", argv, err)
	}
	b := darwinSample(t, "procargs2_claude_print.bin")
	for _, bad := range [][]byte{nil, b[:3], {0xff, 0xff, 0xff, 0x7f, 'x', 0}, b[:60]} {
		if argv, err := parseProcArgs2(bad); err == nil {
			t.Errorf("%q parsed as %q", bad, argv)
		}
	}
}

// The liveness decisions come out of macOS's facts as they do out of
// /proc.
func TestDecisionsOnDarwinFacts(t *testing.T) {
	src := Recorded{
		Kinfo: map[int][]byte{4242: darwinSample(t, "kinfo_proc_node.bin")},
		Args:  map[int][]byte{4242: darwinSample(t, "procargs2_claude_print.bin")},
		Boot:  "5E7F3C1A-0000-4000-8000-000000000001",
	}
	p := Identify(src, 4242)
	if p.PID != 4242 || p.Start != 1764650000*1e6+123456 || p.BootID != src.Boot {
		t.Fatalf("process %+v", p)
	}
	if got := p.Check(src); got != Live {
		t.Fatalf("the same process: %s", got)
	}
	reused := p
	reused.Start++
	if got := reused.Check(src); got != Ended {
		t.Fatalf("pid reused (another start time): %s", got)
	}
	other := p
	other.BootID = "5E7F3C1A-0000-4000-8000-000000000000"
	if got := other.Check(src); got != Ended {
		t.Fatalf("another boot: %s", got)
	}
	src.Kinfo[4242] = darwinSample(t, "kinfo_proc_zombie.bin")
	if got := p.Check(src); got != Ended {
		t.Fatalf("zombie: %s", got)
	}
	delete(src.Kinfo, 4242)
	if got := p.Check(src); got != Ended {
		t.Fatalf("gone: %s", got)
	}
}

func TestParsePsStat(t *testing.T) {
	st, err := parsePsStat([]byte("  6496 Ss   Wed Dec  2 04:33:05 2026 Google Chrome Helper\n"))
	want := Stat{PPID: 6496, State: 'S', Start: 1796185985, Comm: "Google Chrome Helper"}
	if err != nil || st != want {
		t.Fatalf("parsed %+v %v, want %+v", st, err, want)
	}
	for _, bad := range []string{"", "12 S", "x S Wed Dec 2 04:33:05 2026 sh", "1 S Wed Dec 2 4:33 2026 sh"} {
		if st, err := parsePsStat([]byte(bad)); err == nil {
			t.Errorf("%q parsed as %+v", bad, st)
		}
	}
}
