package room

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/panel"
	"github.com/relay-baton/relay-baton/resume"
)

// The serve page's context panel on a log of real agent runs: runs that
// started and continued claude and codex conversations, and a run that
// failed. A View once panicked on the first run with a conversation and
// held its lock, so every later /api/context waited forever.

// realRunsFixture is a conversation.jsonl written by the real CLIs
// against the mocks (TestE2EServeContextOnRealRuns -update rewrites it).
const realRunsFixture = "testdata/view/real-runs.jsonl"

// runOneShot runs relay-baton args in dir with env and returns its output.
func runOneShot(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	bin, _ := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "NO_COLOR=1"}, env...)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func TestE2EServeContextOnRealRuns(t *testing.T) {
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("## Goal\nShout.\n\n## Steps\n1. Add shout to greet.py\n\n## Verification\npython3 greet.py\n\n## Next step\nAdd shout")))
	o := agenttest.NewOpenAI(t,
		agenttest.Reply(agenttest.Exec(`printf 'def shout(s):\n    return s.upper()\n' >> greet.py`)),
		agenttest.Reply(agenttest.Text("Added shout to greet.py.")),
		agenttest.Step{Status: http.StatusBadRequest, Message: "mock refuses this request"},
	)
	dir := newRepo(t)
	env := agenttest.OfflineEnv(t, a, o)
	if out := runOneShot(t, dir, env, "plan", "--yes", "add shout"); !strings.Contains(out, "wrote .ai-session/plan.md") {
		t.Fatalf("plan:\n%s", out)
	}
	if out := runOneShot(t, dir, env, "execute", "--yes"); !strings.Contains(out, "codex: exit 0") {
		t.Fatalf("execute:\n%s", out)
	}
	if out := runOneShot(t, dir, env, "execute", "--yes", "--continue"); !strings.Contains(out, "continues codex conversation") || strings.Contains(out, "codex: exit 0") {
		t.Fatalf("the failed execute:\n%s", out)
	}
	log, err := os.ReadFile(logFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"conversation":`, `"exitCode":1`} {
		if !strings.Contains(string(log), want) {
			t.Fatalf("the log has no %s:\n%s", want, log)
		}
	}
	if updateGolden() {
		fixture := strings.ReplaceAll(string(log), dir, "/tmp/demo")
		os.MkdirAll(filepath.Dir(realRunsFixture), 0o755)
		if err := os.WriteFile(realRunsFixture, []byte(fixture), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// relay-baton serve on that log: /api/context answers, and again.
	url, tok := serveURL(t, dir)
	for i := range 2 {
		var p panel.Facts
		getJSON(t, url+"/api/context?token="+tok, &p)
		if p.Last == nil || p.Last.Agent != "codex" || p.Last.ExitCode != 1 || p.Active != "claude" {
			t.Fatalf("request %d: /api/context %+v (last %+v)", i+1, p, p.Last)
		}
	}
	// The live context: the page's event stream sends the same panel.
	var p panel.Facts
	if err := json.Unmarshal([]byte(streamEvent(t, url+"/api/room/stream?token="+tok, "context")), &p); err != nil || p.Last == nil || p.Last.ExitCode != 1 {
		t.Fatalf("the stream's context: %+v %v", p, err)
	}
}

// streamEvent reads the SSE stream at url until an event named name and
// returns its data; the client's timeout is a hang guard.
func streamEvent(t *testing.T, url, name string) string {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for want := false; ; {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s ended before a %s event: %v", url, name, err)
		}
		l = strings.TrimRight(l, "\n")
		if l == "event: "+name {
			want = true
		} else if d, ok := strings.CutPrefix(l, "data: "); ok && want {
			return d
		}
	}
}

// TestViewContextOnRealRunsFixture: the View reads the stored log of real
// runs (conversations, a failed run) and answers every time.
func TestViewContextOnRealRunsFixture(t *testing.T) {
	b, err := os.ReadFile(realRunsFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	if err := os.WriteFile(logFile(dir), b, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := OpenView(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r := agenttest.Within(t, "View.Panel", func() panelOrErr {
			p, err := v.Panel(context.Background())
			return panelOrErr{p, err}
		})
		p, err := r.p, r.err
		if err != nil || p.Last == nil || p.Last.Agent != "codex" || p.Last.ExitCode != 1 {
			t.Fatalf("call %d: %+v %v", i+1, p, err)
		}
		if i == 1 { // a run appended since: the view catches up
			f, _ := os.OpenFile(logFile(dir), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(b[strings.Index(string(b), "\n")+1:])
			f.Close()
		}
	}
	rs, err := resume.Read(logFile(dir), 0)
	if err != nil || rs.Conversations["codex"].ID == "" || rs.Conversations["claude"].ID == "" {
		t.Fatalf("the fixture holds no conversations: %+v %v", rs.Conversations, err)
	}
}

type panelOrErr struct {
	p   panel.Facts
	err error
}

var serveURLRE = regexp.MustCompile(`(http://127\.0\.0\.1:[0-9]+)/\?token=([A-Za-z0-9_-]+)`)

// serveURL starts relay-baton serve --port 0 in dir and returns its
// address and the page's secret (from the address it printed); the server
// is stopped when the test ends.
func serveURL(t *testing.T, dir string) (string, string) {
	t.Helper()
	bin, _ := binaries(t)
	cmd := exec.Command(bin, "serve", "--port", "0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, worktreesEnv(), "NO_COLOR=1"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := agenttest.Within(t, "serve's first line", func() string {
		s, _ := bufio.NewReader(out).ReadString('\n')
		return s
	})
	go io.Copy(io.Discard, out)
	m := serveURLRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	return m[1], m[2]
}

// getJSON GETs url and decodes its JSON answer; the client's timeout is a
// hang guard (a handler that never answers), not a measure.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, b)
	}
}
