package repl

import (
	"context"
	"strings"
	"testing"
)

func TestPanelBeforeEachPromptWithoutATerminal(t *testing.T) {
	var out strings.Builder
	e := newEngine(t, &out)
	o := Options{In: strings.NewReader("/agent codex\n\n/status\n"), Out: &out, Err: &out}
	if err := Run(context.Background(), e, o); err != nil {
		t.Fatal(err)
	}
	// One status line before each prompt that follows a command (not after
	// the empty line), none drawn as a box.
	if n := strings.Count(out.String(), "ctx claude · plan none · 0 changed"); n != 1 {
		t.Fatalf("%d claude status lines:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "ctx codex · plan none · 0 changed"); n != 2 {
		t.Fatalf("%d codex status lines:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "┌") {
		t.Fatal("a box was drawn without a terminal")
	}
}

// The banner is one line when it fits the terminal and two (the hint on
// its own) when it does not, so the terminal never breaks it mid-word.
func TestBannerFitsTheWidth(t *testing.T) {
	for _, c := range []struct {
		cols  string
		lines int
	}{{"300", 1}, {"40", 2}} {
		t.Setenv("COLUMNS", c.cols)
		var out strings.Builder
		e := newEngine(t, &out)
		if err := Run(context.Background(), e, Options{In: strings.NewReader(""), Out: &out, Err: &out}); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(out.String(), "ctx ")
		want := "[relay-baton] Agent Room · " + e.Root + " · active agent claude · /help lists commands, Ctrl-D leaves\n"
		if c.lines == 2 {
			want = "[relay-baton] Agent Room · " + e.Root + " · active agent claude\n[relay-baton] /help lists commands, Ctrl-D leaves\n"
		}
		if first != want {
			t.Errorf("COLUMNS=%s: banner %q, want %q", c.cols, first, want)
		}
	}
}

func TestPromptColourOnlyWhenAsked(t *testing.T) {
	if promptFor("codex", false) != "codex› " || !strings.Contains(promptFor("codex", true), "\x1b[") {
		t.Fatalf("prompts %q %q", promptFor("codex", false), promptFor("codex", true))
	}
}
