package panel

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/reports"
)

var sgrRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func samplePanel() Facts {
	return Facts{
		Active: agents.Codex, Mode: "agents", Plan: true, PlanAge: 3 * time.Hour, PlanMissing: []string{"Risks", "Verification"},
		Diet: "balanced", Ratio: 0.81, Changed: 12,
		Last:    &reports.LastRun{Agent: agents.Codex, Command: "execute", ExitCode: 0, Duration: 83*time.Second + 400*time.Millisecond, CostUSD: 0.0312},
		LastAgo: 2 * time.Minute, Target: "0b6f6a3e-1111-4222-8333-444455556666", QueueDepth: 3, QueueAge: 95 * time.Minute,
	}
}

func TestPanelLineFitsEveryWidth(t *testing.T) {
	for _, p := range []Facts{samplePanel(), {Active: agents.Claude, Diet: "ultra", Changed: -1}} {
		full := sgrRE.ReplaceAllString(p.Line(1000, true), "")
		if full != p.Line(1000, false) {
			t.Fatalf("coloured and plain differ:\n%q\n%q", full, p.Line(1000, false))
		}
		for _, w := range []int{20, 40, 60, 80, 99, 100, 200} {
			for _, c := range []bool{false, true} {
				l := p.Line(w, c)
				plain := sgrRE.ReplaceAllString(l, "")
				if n := utf8.RuneCountInString(plain); n > w-1 {
					t.Fatalf("width %d: %d runes: %q", w, n, plain)
				}
				if !c && strings.Contains(l, "\x1b") {
					t.Fatalf("escape codes without colour: %q", l)
				}
				if strings.Contains(l, "\n") {
					t.Fatalf("line has a newline: %q", l)
				}
				if utf8.RuneCountInString(full) > w-1 && !strings.HasSuffix(plain, "…") {
					t.Fatalf("width %d: cut without an ellipsis: %q", w, plain)
				}
				if w >= 30 && !strings.HasPrefix(full, strings.TrimSuffix(plain, " …")) {
					t.Fatalf("width %d: not whole facts from the start: %q", w, plain)
				}
			}
		}
	}
	got := samplePanel().Line(200, false)
	want := "ctx codex · plan 3h gate -2 · 12 changed · budget 0.81 · last codex /execute exit 0 1m23s $0.031 · orch 0b6f6a3e q3, oldest 1h"
	if got != want {
		t.Fatalf("line\n got %q\nwant %q", got, want)
	}
	// At 60 columns the last run (95 runes with it) is dropped whole.
	if got, want := samplePanel().Line(60, false), "ctx codex · plan 3h gate -2 · 12 changed · budget 0.81 …"; got != want {
		t.Fatalf("line at 60: %q, want %q", got, want)
	}
}

func TestPanelBlockIsABoxOfTheWidth(t *testing.T) {
	for _, w := range []int{100, 120, 161, 200, 400} {
		for _, c := range []bool{false, true} {
			lines := samplePanel().Block(w, c)
			want := min(w-1, 160)
			for i, l := range lines {
				plain := sgrRE.ReplaceAllString(l, "")
				if n := utf8.RuneCountInString(plain); n != want {
					t.Fatalf("width %d line %d: %d runes, want %d: %q", w, i, n, want, plain)
				}
				if !c && strings.Contains(l, "\x1b") {
					t.Fatalf("escape codes without colour: %q", l)
				}
			}
			text := sgrRE.ReplaceAllString(strings.Join(lines, "\n"), "")
			for _, s := range []string{"codex (agent room)", "3h old, gate: lacks Risks", "0.81 balanced (stops at 0.95)", "12 files",
				"codex /execute exit 0 1m23s $0.031, 2m ago", "0b6f6a3e queue 3, oldest 1h"} {
				if !strings.Contains(text, s) {
					t.Fatalf("width %d: block lacks %q:\n%s", w, s, text)
				}
			}
		}
	}
}
