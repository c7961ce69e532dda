package cli

import (
	"os"
	"strings"
	"testing"
)

func TestDecideColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	os.Unsetenv("NO_COLOR")
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		mode string
		tty  bool
		env  func(string) string
		want bool
	}{
		{"auto", true, env(), true},
		{"auto", false, env(), false},
		{"", true, env(), true},
		{"auto", true, env("NO_COLOR", "1"), false},
		{"auto", true, env("TERM", "dumb"), false},
		{"always", false, env("NO_COLOR", "1"), true},
		{"never", true, env(), false},
	}
	for _, c := range cases {
		got, err := decideColor(c.mode, c.tty, c.env)
		if err != nil || got != c.want {
			t.Errorf("decideColor(%q, tty=%v): %v, %v; want %v", c.mode, c.tty, got, err, c.want)
		}
	}
	if _, err := decideColor("sometimes", true, env()); err == nil {
		t.Error("decideColor accepted a bad mode")
	}
	// NO_COLOR set but empty still counts (no-color.org: "when present").
	t.Setenv("NO_COLOR", "")
	if got, _ := decideColor("auto", true, env()); got {
		t.Error("an empty NO_COLOR did not turn colour off")
	}
}

// A long line breaks at its last space that fits, keeping "[--flag VALUE]"
// whole; a "Usage:" line's continuations are indented by two.
func TestFitLines(t *testing.T) {
	if got := FitLines("Usage: relay-baton x [--aaaa AAAA] [--bbbb BBBB] [--cccc CCCC] [--dddd DDDD] [--eeee EEEE]\n", 40); got != "Usage: relay-baton x [--aaaa AAAA]\n  [--bbbb BBBB] [--cccc CCCC]\n  [--dddd DDDD] [--eeee EEEE]\n" {
		t.Errorf("FitLines: %q", got)
	}
}

func TestVersionWithoutVCS(t *testing.T) {
	v := BuildVersion{Version: "(devel)", Go: "go1.26.8"}
	if s := v.String(); !strings.Contains(s, "no VCS information") {
		t.Fatal(s)
	}
	v = BuildVersion{Version: "v1.2.3", Revision: "0123456789abcdef", Time: "2026-12-01T20:00:00Z", Modified: true, Go: "go1.26.8"}
	if s := v.String(); s != "relay-baton v1.2.3 (commit 0123456789ab, 2026-12-01T20:00:00Z, modified; go1.26.8)" {
		t.Fatal(s)
	}
}
