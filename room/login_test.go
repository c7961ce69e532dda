package room

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents"
)

// /login says how to log in to each agent (it is not an unknown command);
// a run refused for want of a login ends in one line naming the fix.
func TestLoginHint(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.Process(context.Background(), "/login"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"to log in to claude: run `claude` in a terminal of its own and type /login (once; the room runs claude with that login)", "to log in to codex: run `codex login` in a terminal (once; the room runs codex with that login)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("/login printed %q, want %q", out, want)
		}
	}
	h.out.Reset()
	if _, err := h.e.Process(context.Background(), "/login codex"); err != nil || strings.Contains(h.out.String(), "claude") {
		t.Fatalf("/login codex: %v %q", err, h.out.String())
	}

	h = newHarness(t, "y")
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		return agents.Result{ExitCode: 1, Duration: time.Second, Err: &agents.LoginError{Agent: agents.Claude}}
	}
	_, err := h.e.Process(context.Background(), "/plan add a flag")
	if err == nil {
		t.Fatal("a failed run returned no error")
	}
	var lines []string
	for _, l := range strings.Split(h.out.String(), "\n") {
		if strings.Contains(l, "not logged in") {
			lines = append(lines, l)
		}
	}
	want := "[relay-baton] " + agents.LoginHint(agents.Claude) + " (exit 1 · 1s)"
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("login failure lines %q, want exactly [%q]", lines, want)
	}
}

// The room's read-only slash commands write nothing but their turns'
// events in conversation.jsonl: no other file under .ai-session or the
// repository (.git included) changes.
func TestReadOnlySlashCommandsWriteOnlyTheLog(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	h := newHarness(t)
	os.WriteFile(filepath.Join(h.dir, "main.go"), []byte("package main // changed\n"), 0o644)
	snap := func() map[string]string {
		m := map[string]string{}
		filepath.Walk(h.dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(h.dir, p)
			if rel == filepath.Join(".ai-session", "conversation.jsonl") {
				return nil
			}
			v := fi.Mode().String()
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				v += string(b)
			}
			m[rel] = v
			return nil
		})
		return m
	}
	before := snap()
	for _, c := range Commands {
		if !strings.Contains(c.Short, "(read-only)") && c.Name != "help" && c.Name != "login" {
			continue
		}
		if _, err := h.e.Process(context.Background(), "/"+c.Name); err != nil {
			t.Errorf("/%s: %v", c.Name, err)
		}
		after := snap()
		for k, v := range after {
			if before[k] != v {
				t.Errorf("/%s changed or created %s", c.Name, k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Errorf("/%s removed %s", c.Name, k)
			}
		}
	}
}

// 'e' with no $VISUAL or $EDITOR explains and asks again: it neither
// cancels nor previews again, and the next answer decides.
func TestEditWithoutEditorAsksAgain(t *testing.T) {
	h := newHarness(t, "e", "y")
	h.term.edit = func(string) (string, error) { return "", ErrNoEditor }
	ran := 0
	h.fr.run = func(context.Context, int, agents.Request) agents.Result {
		ran++
		return agents.Result{ExitCode: 0, Duration: time.Second, FinalText: "an answer"}
	}
	if _, err := h.e.Process(context.Background(), "what does main.go do?"); err != nil {
		t.Fatalf("the run after e, y: %v\n%s", err, h.out.String())
	}
	out := h.out.String()
	if ran != 1 || h.term.asked != 2 || strings.Contains(out, "cancelled") {
		t.Fatalf("ran %d, asked %d times:\n%s", ran, h.term.asked, out)
	}
	if !strings.Contains(out, "no editor to open: $VISUAL and $EDITOR are not set and none of") || !strings.Contains(out, "answer y for the prompt as shown") {
		t.Fatalf("no explanation:\n%s", out)
	}
	if n := strings.Count(out, "preview: "); n != 1 {
		t.Fatalf("%d previews for one prompt:\n%s", n, out)
	}
}

// /diagnose wraps each check's detail between words under its column,
// within the width /help keeps, as doctor does at a terminal.
func TestDiagnoseWrapsBetweenWords(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.Process(context.Background(), "/diagnose"); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	long := false
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > HelpWidth && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("a line of %d columns: %q", n, l)
		}
		if strings.HasPrefix(l, strings.Repeat(" ", 28)) {
			long = true // a continuation under the detail column
		}
	}
	if !long {
		t.Fatalf("no check was long enough to wrap:\n%s", out)
	}
	r := h.e.Doctor(context.Background(), true)
	if got, want := strings.Join(strings.Fields(r.RenderWidth(false, HelpWidth)), " "), strings.Join(strings.Fields(r.Render(false)), " "); got != want {
		t.Fatalf("wrapping changed the words:\n%s\nvs\n%s", got, want)
	}
}
