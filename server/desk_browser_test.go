package server

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/subprocess"
)

// serveRepoEnv starts the real `relay-baton serve --port 0` in dir with
// env laid over the test's environment (the mock APIs' offline setup),
// and returns the page's address and the serve process.
func serveRepoEnv(t *testing.T, dir string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(rbBin, "serve", "--port", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	base, _ := servedAt(t, line)
	go func() { _, _ = br.WriteTo(os.Stderr) }()
	return base, cmd
}

// pageIn starts the real `relay-baton serve` in dir (env laid over the
// test's environment) and opens its page in a new headless Chromium: the
// set-up the page's browser tests share. The first Run starts the browser
// on ctx itself (a shorter context would take the browser with it); first
// runs before the navigation, in that Run (a viewport's size).
func pageIn(t *testing.T, dir string, env []string, first ...chromedp.Action) (ctx context.Context, base string, serve *exec.Cmd) {
	t.Helper()
	base, serve = serveRepoEnv(t, dir, env...)
	ctx = browser(t)
	if err := chromedp.Run(ctx, append(first, chromedp.Navigate(pageURL(t, base)))...); err != nil {
		t.Fatal(err)
	}
	return ctx, base, serve
}

// until polls cond under a hang guard of browserGuard.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(browserGuard); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", browserGuard, what)
		}
	}
}

// waitJS waits for a JavaScript expression to be true on the page.
func waitJS(expr string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			var ok bool
			if err := chromedp.Evaluate(expr, &ok).Do(ctx); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// typeLine sends a line through the page's room composer.
func typeLine(line string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.SetValue(`#room-line`, line, chromedp.ByQuery),
		press(`#room-send`),
	}
}

func logEvents(t *testing.T, dir string) []events.Event {
	t.Helper()
	var list []events.Event
	if _, err := events.ReadFile(filepath.Join(dir, ".ai-session", "conversation.jsonl"), func(e events.Event) error {
		list = append(list, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return list
}

// loggedRun says whether the log in dir records an agent_run whose meta
// is as want says.
func loggedRun(t *testing.T, dir string, want func(events.AgentRunMeta) bool) bool {
	t.Helper()
	for _, e := range logEvents(t, dir) {
		if m, err := events.MetaOf[events.AgentRunMeta](&e); err == nil && want(m) {
			return true
		}
	}
	return false
}

// pageText is an element's textContent (a closed <details> too).
func pageText(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector(`+jsString(sel)+`).textContent`, &s)); err != nil {
		t.Fatal(err)
	}
	return s
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func shoot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// TestPagePlanConfirmedWithClick: /plan typed in the page's composer is
// previewed as the terminal previews it (argv, policy, held-back
// variables), runs the real claude against the mock only after Run, its
// activity shows in the page as it comes, and plan.md is written.
func TestPagePlanConfirmedWithClick(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Thinking("look around"), agenttest.Bash("ls")),
		agenttest.Reply(agenttest.Text("## Goal\nAdd --verbose.\n\n## Steps\n1. Edit main.go\n")),
	)
	dir := gitRepo(t)
	ctx, _, _ := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil))
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready · active agent claude"),
		typeLine("/plan add a --verbose flag"),
		waitText(`#preview-text`, "preview: /plan → claude (planner)"),
		waitText(`#preview-text`, "argv:"),
		waitText(`#preview-text`, "policy:"),
		waitText(`#preview-title`, "run this? /plan → claude (planner)"),
	); err != nil {
		t.Fatalf("the preview: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude made %d requests before Run", n)
	}
	shoot(ctx, t, "room-page-preview.png")
	if err := within(ctx, 30*time.Second,
		press(`#preview-run`),
		waitText(`#console`, "Bash"),
		waitText(`#console`, "wrote .ai-session/plan.md"),
		waitText(`#room-status`, "ready"),
		waitText(`#turns`, "plan.md written by claude"),
		// The reply is rendered as Markdown in the console: its headings
		// are headings, its list a list.
		waitText(`#console .md h2`, "Goal"),
		waitText(`#console .md ol li`, "Edit main.go"),
	); err != nil {
		t.Fatalf("the run: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if txt := pageText(ctx, t, "#console"); strings.Contains(txt, "## Goal") {
		t.Fatalf("the reply's Markdown is shown raw in the console:\n%s", txt)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".ai-session", "plan.md"))
	if err != nil || !strings.Contains(string(b), "Add --verbose.") {
		t.Fatalf("plan.md %q %v", b, err)
	}
	var preview, confirmed string
	for _, e := range logEvents(t, dir) {
		switch e.Kind {
		case events.KindPromptPreview:
			preview = e.ID
		case events.KindCommand:
			if m, err := events.MetaOf[events.CommandMeta](&e); err == nil && m.Confirmed != nil && *m.Confirmed {
				confirmed = m.PreviewID
			}
		}
	}
	if preview == "" || confirmed != preview {
		t.Fatalf("the confirmation names preview %q, the preview is %q", confirmed, preview)
	}
	shoot(ctx, t, "room-page-ran.png")
}

// TestPageDeclinedPreviewRunsNothing: Cancel on a preview runs nothing
// and is logged as the terminal logs a no.
func TestPageDeclinedPreviewRunsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("should never be asked")))
	dir := gitRepo(t)
	ctx, _, _ := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil))
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("what is in this repository?"),
		waitText(`#preview-text`, "preview: /ask → claude"),
		press(`#preview-cancel`),
		waitText(`#console`, "cancelled. nothing ran."),
		waitText(`#room-status`, "ready"),
		waitJS(`document.getElementById("preview").hidden`),
	); err != nil {
		t.Fatalf("cancel: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude made %d requests after Cancel", n)
	}
	if !loggedRun(t, dir, func(m events.AgentRunMeta) bool { return m.Cancelled && !m.Ran && m.Reason == "declined" }) {
		t.Fatal("the cancel is not logged as a declined run")
	}
}

// TestPageStalePreviewRefused: plan.md changes between the preview of a
// question (whose prompt carries the plan) and the click: Run is refused,
// nothing runs, the page says why and shows the preview made again from
// the new plan; Run on that one runs the real claude.
func TestPageStalePreviewRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("the plan says: ship the second plan")))
	dir := gitRepo(t)
	rb(t, dir, "note", "start")
	plan := filepath.Join(dir, ".ai-session", "plan.md")
	os.WriteFile(plan, []byte("## Goal\nthe first plan <img src=x onerror=\"window.pwned=1\"> \u202egnp.exe\n"), 0o600)
	ctx, base, _ := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil))
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("what does the plan say?"),
		waitJS(`document.getElementById("preview-all").textContent.includes("the first plan")`),
	); err != nil {
		t.Fatalf("the first preview: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	var first string
	chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("preview").dataset.id`, &first))
	// Repository text in the preview is text: markup shows as itself, a
	// right-to-left override as <U+202E>.
	var pwned bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.pwned !== undefined || document.querySelectorAll("#preview img").length > 0`, &pwned)); err != nil || pwned {
		t.Fatalf("markup in plan.md was rendered in the preview (%v)", err)
	}
	if all := pageText(ctx, t, "#preview-all"); !strings.Contains(all, `<img src=x onerror="window.pwned=1"> <U+202E>gnp.exe`) {
		t.Fatalf("the preview does not show the plan's text as text: %q", all)
	}
	os.WriteFile(plan, []byte("## Goal\nthe second plan\n"), 0o600)
	if err := within(ctx, 10*time.Second,
		press(`#preview-run`),
		waitText(`#room-error`, "refused: plan.md or HEAD changed after the preview"),
		waitJS(`document.getElementById("preview").dataset.id !== `+jsString(first)+` && document.getElementById("preview-all").textContent.includes("the second plan")`),
	); err != nil {
		t.Fatalf("the stale click: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude made %d requests after a stale click", n)
	}
	// A click naming the old preview (an older tab) is refused too.
	resp, err := http.Post(base+"/api/room/answer", "application/json", strings.NewReader(`{"id":`+jsString(first)+`,"hash":"x","action":"run"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("an answer naming the old preview: %d, want 409", resp.StatusCode)
	}
	shoot(ctx, t, "room-page-stale.png")
	if err := within(ctx, 30*time.Second,
		press(`#preview-run`),
		waitText(`#console`, "the plan says: ship the second plan"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("the run of the new preview: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if r := a.Requests(); len(r) == 0 || !strings.Contains(string(r[len(r)-1].Body), "the second plan") {
		t.Fatalf("claude was not asked with the second plan (%d requests)", len(r))
	}
	if !loggedRun(t, dir, func(m events.AgentRunMeta) bool {
		return !m.Ran && m.PreviewID == first && strings.HasPrefix(m.Reason, "stale: ")
	}) {
		t.Fatal("the stale click is not logged against the first preview")
	}
}

// TestPageStopDuringRun: Stop while the real claude streams ends its
// process tree (serve has no child left), says so, and the room stays:
// the next command previews.
func TestPageStopDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t, agenttest.Step{Blocks: []agenttest.Block{agenttest.Text("a reply that never ends")}, Stall: true})
	dir := gitRepo(t)
	ctx, _, serve := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil))
	if err := within(ctx, 30*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("tell me a long story"),
		waitText(`#preview-text`, "preview: /ask → claude"),
		press(`#preview-run`),
		waitText(`#room-status`, "an agent runs: tell me a long story"),
	); err != nil {
		t.Fatalf("the run: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	until(t, "claude's request to the mock", func() bool { return len(a.Requests()) > 0 })
	if len(subprocess.Descendants(serve.Process.Pid)) == 0 {
		t.Fatal("no agent process under serve during the run")
	}
	// Another screen sees the run lock while it runs.
	b, err := os.ReadFile(filepath.Join(dir, ".ai-session", "run.holder"))
	if err != nil || !strings.Contains(string(b), `"screen":"relay-baton serve's page"`) {
		t.Fatalf("run.holder: %s %v", b, err)
	}
	if err := within(ctx, 30*time.Second,
		press(`#room-stop`),
		waitText(`#console`, "cancelled"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("stop: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	until(t, "the agent's process tree to end", func() bool { return len(subprocess.Descendants(serve.Process.Pid)) == 0 })
	if _, err := os.Stat(filepath.Join(dir, ".ai-session", "run.holder")); !os.IsNotExist(err) {
		t.Fatalf("run.holder after the run: %v", err)
	}
	if !loggedRun(t, dir, func(m events.AgentRunMeta) bool { return m.Ran && m.Cancelled }) {
		t.Fatal("the stopped run is not logged as cancelled")
	}
	if err := within(ctx, 30*time.Second,
		typeLine("/status"),
		waitText(`#console`, "last run"),
		waitText(`#room-status`, "ready"),
	); err != nil {
		t.Fatalf("the room after Stop: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
}

// TestPageRoomSecondOrigin: a hostile page in the same browser (another
// port of 127.0.0.1, so the cookie goes with its requests) can neither
// start a command, answer a preview, stop a run, nor read the console.
func TestPageRoomSecondOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	rb(t, dir, "note", "start")
	ctx, base, _ := pageIn(t, dir, nil)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/form" {
			w.Write([]byte(`<!doctype html><form id=f method=POST action="` + base + `/api/room/run" enctype="text/plain"><input name='{"line":"/note from a form","x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`))
			return
		}
		w.Write([]byte(`<!doctype html><script>
const out = [];
const post = async (path, body, type) => {
  try { const r = await fetch("` + base + `" + path, { method: "POST", credentials: "include", headers: { "Content-Type": type }, body }); out.push(path + " " + r.status); }
  catch (e) { out.push(path + " blocked"); }
};
(async () => {
  try { const r = await fetch("` + base + `/api/room/state", { credentials: "include" }); out.push("state " + r.status + " " + (await r.text()).slice(0, 80)); } catch (e) { out.push("state blocked"); }
  await post("/api/room/run", '{"line":"/note from the hostile page"}', "application/json");
  try { await fetch("` + base + `/api/room/run", { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body: '{"line":"/note no-cors"}' }); out.push("no-cors sent"); } catch (e) { out.push("no-cors blocked"); }
  await post("/api/room/answer", '{"id":"x","hash":"y","action":"run"}', "application/json");
  await post("/api/room/stop", '{}', "application/json");
  await new Promise((done) => { const es = new EventSource("` + base + `/api/room/console", { withCredentials: true }); es.onopen = () => { out.push("console open"); es.close(); done(); }; es.onerror = () => { out.push("console refused"); es.close(); done(); }; });
  window.result = out.join("; ");
})();
</script>`))
	}))
	defer hostile.Close()
	var result string
	err := chromedp.Run(ctx,
		waitText(`#room-status`, "ready"),
		chromedp.Navigate(hostile.URL+"/"),
		chromedp.Poll(`window.result`, &result),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hostile page: %s", result)
	if strings.Contains(result, "console open") || strings.Contains(result, " 200") || strings.Contains(result, " 202") || strings.Contains(result, `"busy"`) {
		t.Errorf("the hostile page got through: %s", result)
	}
	if err := within(ctx, 0, chromedp.Navigate(hostile.URL+"/form"), waitText(`body`, "refused")); err != nil {
		t.Fatal(err)
	}
	for _, e := range logEvents(t, dir) {
		if strings.Contains(e.Text, "hostile") || strings.Contains(e.Text, "no-cors") || strings.Contains(e.Text, "from a form") || e.Kind == events.KindCommand {
			t.Fatalf("the hostile page reached the room: %s %q", e.Kind, e.Text)
		}
	}
	// The user's page still drives the room in the same browser.
	if err := within(ctx, 0, chromedp.Navigate(base+"/"), waitText(`#room-status`, "ready"), typeLine("/note from the page"), waitText(`#turns`, "from the page")); err != nil {
		t.Fatalf("the user's page after the hostile one: %v", err)
	}
}

// TestPageAndTerminalOneRunAtATime: a terminal room and the page on one
// repository. While the terminal's agent runs, the page names that run
// (agent, command, pid, the terminal room), previews nothing and offers
// no Run; once it is stopped with Ctrl-C the page runs. While the page's
// run holds the repository, the terminal room refuses to preview a
// second one and says which run holds it, in its context panel before anything is typed and when a run is asked for.
func TestPageAndTerminalOneRunAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t)
	a.When("the terminal's long story", agenttest.Step{Blocks: []agenttest.Block{agenttest.Text("once upon a time")}, Stall: true})
	a.When("the page's long story", agenttest.Step{Blocks: []agenttest.Block{agenttest.Text("long ago")}, Stall: true})
	dir := gitRepo(t)
	rb(t, dir, "note", "start")
	env := agenttest.OfflineEnv(t, a, nil)
	ctx, _, _ := pageIn(t, dir, env)
	room := startRoom(t, dir, env...)
	room.until(t, "claude›")
	if err := within(ctx, 10*time.Second, waitText(`#room-status`, "ready")); err != nil {
		t.Fatal(err)
	}
	room.f.Write([]byte("tell me the terminal's long story\r"))
	room.until(t, "run this?")
	room.f.Write([]byte("y"))
	asked := func(what string) func() bool {
		return func() bool {
			for _, r := range a.Requests() {
				if strings.Contains(agenttest.LastUserText(r), what) {
					return true
				}
			}
			return false
		}
	}
	until(t, "the terminal's run to reach claude", asked("the terminal's long story"))
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "another agent run holds this repository: claude /ask, pid "),
		waitText(`#room-status`, "in relay-baton chat"),
		typeLine("tell me the page's long story"),
		waitText(`#console`, "another agent run holds this repository"),
		waitText(`#room-status`, "another agent run holds"),
	); err != nil {
		t.Fatalf("the page while the terminal runs: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	var hidden bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("preview").hidden`, &hidden)); err != nil || !hidden {
		t.Fatalf("the page shows a preview while the terminal's run holds the repository (%v)", err)
	}
	if asked("the page's long story")() {
		t.Fatal("the page's question reached claude while the terminal's run held the repository")
	}
	shoot(ctx, t, "room-page-held.png")
	room.f.Write([]byte{3}) // Ctrl-C: the terminal's run ends
	room.until(t, "cancelled")
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("tell me the page's long story"),
		waitText(`#preview-text`, "preview: /ask → claude"),
		press(`#preview-run`),
		waitText(`#room-status`, "an agent runs"),
	); err != nil {
		t.Fatalf("the page after the terminal's run: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	until(t, "the page's run to reach claude", asked("the page's long story"))
	// The terminal's context panel says it before anything is typed.
	room.until(t, "held by  claude /ask, pid ")
	room.mu.Lock()
	typed := room.buf.Len() // the line's echo may be split by the page's turns shown above the prompt
	room.mu.Unlock()
	room.f.Write([]byte("/plan a second run\r"))
	room.until(t, "another agent run holds this repository: claude /ask, pid ")
	room.until(t, "in relay-baton serve's page")
	room.mu.Lock()
	screen := room.buf.String()
	room.mu.Unlock()
	if strings.Contains(screen[typed:], "preview:") {
		t.Fatalf("the terminal previewed a second run:\n%s", screen)
	}
	if err := within(ctx, 10*time.Second, press(`#room-stop`), waitText(`#room-status`, "ready")); err != nil {
		t.Fatal(err)
	}
}

var updateShot = flag.Bool("update-shot", false, "rewrite docs/serve.png from TestServeScreenshot")

// TestServeScreenshot is the page as docs/serve.png shows it: a plan run
// from the page (the real claude against the mock), a question answered
// (its Markdown rendered in the timeline), then a question's preview
// waiting for Run. With -update-shot it rewrites docs/serve.png:
//
//	go test ./server -run TestServeScreenshot -update-shot
func TestServeScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t,
		agenttest.Reply(agenttest.Thinking("look around"), agenttest.Bash("ls")),
		agenttest.Reply(agenttest.Text("## Goal\nAdd a --verbose flag.\n\n## Scope (in)\nmain.go\n\n## Out of scope\nLog files\n\n## Approach\nA flag and a logger\n\n## Steps\n1. Parse --verbose in main.go\n2. Log each step when it is set\n\n## Risks\nNoise\n\n## Verification\ngo test ./...\n\n## Next step\nStep 1\n")),
		agenttest.Reply(agenttest.Text("Step **2**: logging every step can flood `stderr`, so keep it behind `--verbose` (see [the flag package](https://pkg.go.dev/flag)).")),
	)
	dir := gitRepo(t)
	rb(t, dir, "note", "the page drives the room")
	ctx, _, _ := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil), chromedp.EmulateViewport(1280, 860))
	if err := within(ctx, 30*time.Second,
		waitText(`#room-status`, "ready"),
		typeLine("/plan add a --verbose flag"),
		waitText(`#preview-text`, "preview: /plan → claude (planner)"),
		press(`#preview-run`),
		waitText(`#turns`, "plan.md written by claude"),
		waitText(`#room-status`, "ready"),
		typeLine("which step is riskiest?"),
		waitText(`#preview-text`, "preview: /ask → claude (ask)"),
		// The click the page's own script would take (a mouse click may
		// land beside a button the growing card has just moved).
		chromedp.WaitEnabled(`#preview-run`, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("preview-run").click()`, nil),
		waitJS(`[...document.querySelectorAll("#turns .md code")].some(e => e.textContent === "--verbose")`),
		waitText(`#room-status`, "ready"),
		typeLine("how do we test it?"),
		waitText(`#preview-text`, "preview: /ask → claude (ask)"),
		waitText(`#ctx-plan`, "gate: ok"),
	); err != nil {
		t.Fatalf("the page: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	if len(png) < 10000 {
		t.Fatalf("a screenshot of %d bytes", len(png))
	}
	if *updateShot {
		if err := os.WriteFile(filepath.Join("..", "docs", "serve.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote docs/serve.png")
	}
}

// TestPageEditPreviewsAgain: Tab completes the room's commands; Edit opens the prompt in a text area; the
// edited text is previewed again (marked edited) before anything runs.
func TestPageEditPreviewsAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	a := agenttest.NewAnthropic(t, agenttest.Reply(agenttest.Text("should never be asked")))
	dir := gitRepo(t)
	ctx, _, _ := pageIn(t, dir, agenttest.OfflineEnv(t, a, nil))
	if err := within(ctx, 10*time.Second,
		waitText(`#room-status`, "ready"),
		// Tab completes command names as in the terminal.
		chromedp.SetValue(`#room-line`, "/sta", chromedp.ByQuery),
		chromedp.Focus(`#room-line`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Tab),
		waitJS(`document.getElementById("room-line").value === "/status "`),
		chromedp.SetValue(`#room-line`, "/re", chromedp.ByQuery),
		chromedp.KeyEvent(kb.Tab),
		waitText(`#room-complete`, "/review"),
		waitText(`#room-complete`, "/replan"),
		typeLine("the first question"),
		waitText(`#preview-text`, "the first question"),
		press(`#preview-edit`),
		waitJS(`!document.getElementById("preview-editor").hidden && document.getElementById("preview-editor").value.includes("the first question")`),
		chromedp.SetValue(`#preview-editor`, "the edited question", chromedp.ByQuery),
		press(`#preview-edit`),
		waitText(`#preview-title`, "· edited"),
		waitText(`#preview-text`, "the edited question"),
		waitJS(`document.getElementById("preview-editor").hidden`),
		press(`#preview-cancel`),
		waitText(`#console`, "cancelled. nothing ran."),
	); err != nil {
		t.Fatalf("edit: %v\nconsole: %s", err, pageText(ctx, t, "#console"))
	}
	if n := len(a.Requests()); n != 0 {
		t.Fatalf("claude made %d requests", n)
	}
	var previews int
	for _, e := range logEvents(t, dir) {
		if m, err := events.MetaOf[events.PromptPreviewMeta](&e); err == nil && m.Edited && m.Prompt == "the edited question" {
			previews++
		}
	}
	if previews != 1 {
		t.Fatalf("%d edited previews logged, want 1", previews)
	}
}
