package server

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/relay-baton/relay-baton/events"
)

// appendEvents appends evs to the conversation log in dir.
func appendEvents(t *testing.T, dir string, evs ...events.Event) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, ".ai-session"), 0o700)
	lg, err := events.OpenLog(filepath.Join(dir, ".ai-session", "conversation.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	for _, e := range evs {
		if err := lg.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

// evalJSON evaluates expr on the page into out.
func evalJSON(ctx context.Context, t *testing.T, expr string, out any) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, out)); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
}

// openChat opens the page of a fake backend on its session, the chat
// panel ready to show what the backend streams.
func openChat(t *testing.T) (ctx context.Context, fb *fakeBackend) {
	t.Helper()
	fb, base, _ := serveFake(t)
	ctx = browser(t)
	if err := chromedp.Run(ctx, // the first Run starts the browser on ctx itself
		chromedp.Navigate(pageURL(t, base)),
		chromedp.WaitReady(`#target option[value="`+sid+`"]`, chromedp.ByQuery),
		chromedp.WaitEnabled(`#text`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	return ctx, fb
}

const ordinaryMarkdown = "## The plan\n\nThis is **bold**, this *italic*, this `x := 1` and a [link](https://example.com/docs).\n\n" +
	"- first\n- second with `code`\n  - nested\n\n1. one\n2. two\n\n> quoted\n> words\n\n```go\nfunc main() {\n\tprintln(\"<b>hi</b>\")\n}\n```\n\n---\n\nMail <mailto:me@example.com>."

// mdShape is what the page made of ordinaryMarkdown, read off the DOM.
type mdShape struct {
	H2, Strong, Em, Code, Pre string
	UL, OL, Nested            int
	Quote                     string
	Href, Target, Rel, URL    string
	Mail                      string
	HR                        int
}

const readShape = `(box => ({
  H2: box.querySelector("h2")?.textContent, Strong: box.querySelector("p strong")?.textContent,
  Em: box.querySelector("p em")?.textContent, Code: box.querySelector("p code")?.textContent,
  Pre: box.querySelector("pre code")?.textContent,
  UL: box.querySelectorAll(":scope > ul > li").length, OL: box.querySelectorAll(":scope > ol > li").length,
  Nested: box.querySelectorAll("ul ul > li").length,
  Quote: box.querySelector("blockquote p")?.textContent,
  Href: box.querySelector("a")?.getAttribute("href"), Target: box.querySelector("a")?.target, Rel: box.querySelector("a")?.rel,
  URL: box.querySelector("a + .md-url")?.textContent,
  Mail: [...box.querySelectorAll("a")].map(a => a.getAttribute("href")).join(" "),
  HR: box.querySelectorAll("hr").length,
}))(document.querySelector(%s))`

func checkShape(t *testing.T, where string, got mdShape) {
	t.Helper()
	want := mdShape{
		H2: "The plan", Strong: "bold", Em: "italic", Code: "x := 1",
		Pre: "func main() {\n\tprintln(\"<b>hi</b>\")\n}",
		UL:  2, OL: 2, Nested: 1, Quote: "quoted\nwords",
		Href: "https://example.com/docs", Target: "_blank", Rel: "noopener noreferrer", URL: " (https://example.com/docs)",
		Mail: "https://example.com/docs mailto:me@example.com", HR: 1,
	}
	if got != want {
		t.Errorf("%s: Markdown rendered as\n%+v\nwant\n%+v", where, got, want)
	}
}

// TestPageRendersMarkdownReplies: an agent's reply, in the timeline and in
// the chat panel, is rendered as Markdown into the elements it names
// (heading, strong, em, code, pre, lists, quote, link with its target
// shown, rule); the user's own words stay as typed.
func TestPageRendersMarkdownReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	rb(t, dir, "note", "start")
	reply := events.New("s", events.RoleClaude, events.KindMessage, ordinaryMarkdown)
	reply.Meta = events.MetaJSON(`{"agent":"claude"}`)
	user := events.New("s", events.RoleUser, events.KindMessage, "**not bold** [x](https://example.com)")
	appendEvents(t, dir, user, reply)
	ctx, _, _ := pageIn(t, dir, nil)
	if err := within(ctx, 0, waitText(`#turns`, "The plan")); err != nil {
		t.Fatal(err)
	}
	var got mdShape
	evalJSON(ctx, t, strings.Replace(readShape, "%s", jsString("#turns .ev.r-claude .t .md"), 1), &got)
	checkShape(t, "timeline", got)
	var userText string
	var userEls int
	evalJSON(ctx, t, `[...document.querySelectorAll("#turns .ev.r-user .t")].find(t => t.textContent.includes("not bold")).textContent`, &userText)
	evalJSON(ctx, t, `document.querySelectorAll("#turns .ev.r-user .t *").length`, &userEls)
	if userText != "**not bold** [x](https://example.com)" || userEls != 0 {
		t.Errorf("the user's message: %q with %d elements, want it as typed", userText, userEls)
	}
	shoot(ctx, t, "room-page-markdown.png")

	// The chat panel: a session's reply as it streams, in two pieces.
	cctx, fb := openChat(t)
	half := strings.Index(ordinaryMarkdown, "- first")
	fb.watch <- Event{Name: "delivered", Data: map[string]string{"lane": "hook"}}
	fb.watch <- Event{Name: "text", Data: map[string]string{"text": ordinaryMarkdown[:half]}}
	fb.watch <- Event{Name: "text", Data: map[string]string{"text": ordinaryMarkdown[half:]}}
	if err := within(cctx, 0, waitText(`#log`, "Mail mailto:me@example.com")); err != nil {
		t.Fatal(err)
	}
	got = mdShape{}
	evalJSON(cctx, t, strings.Replace(readShape, "%s", jsString("#log .msg.agent .body .md"), 1), &got)
	checkShape(t, "chat panel", got)
}

// hostileReply is a reply written to attack the page: markup, a script,
// an image whose error handler runs code, javascript: and data: links, a
// right-to-left override, an HTML comment, and a code block of 10,000
// lines with markup in it.
func hostileReply(lines int) string {
	var b strings.Builder
	b.WriteString("<img src=x onerror=\"window.pwned=1\">\n\n[x](javascript:alert(1)) and [y](javascript:window.pwned=3) and [z](data:text/html,<script>window.pwned=6</script>)\n\n")
	b.WriteString("<script>window.pwned=4</script>\n\nfile \u202egnp.exe and <!-- an HTML comment -->\n\n<a href=\"javascript:window.pwned=5\">raw</a> <iframe src=\"javascript:window.pwned=7\"></iframe>\n\n```html\n")
	for i := range lines {
		if i == 0 {
			b.WriteString("<img src=x onerror=\"window.pwned=8\">\n")
			continue
		}
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	b.WriteString("```\n\nthe end")
	return b.String()
}

// TestPageMarkdownHostileReply: a hostile reply, in the timeline and in
// the chat panel, renders as text and visible marks: nothing runs, no
// element comes from its markup, the javascript: and data: links are
// not clickable (their targets shown as text), and the 10,000-line code
// block is one block of text.
func TestPageMarkdownHostileReply(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	dir := gitRepo(t)
	reply := events.New("s", events.RoleClaude, events.KindMessage, hostileReply(10000))
	reply.Meta = events.MetaJSON(`{"agent":"claude"}`)
	appendEvents(t, dir, reply)
	ctx, _, _ := pageIn(t, dir, nil)
	if err := within(ctx, 0, waitText(`#turns`, "the end")); err != nil {
		t.Fatal(err)
	}
	checkHostile(ctx, t, "timeline", "#turns .ev.r-claude .t .md")

	cctx, fb := openChat(t)
	fb.watch <- Event{Name: "text", Data: map[string]string{"text": hostileReply(10000)}}
	if err := within(cctx, 0, waitText(`#log`, "the end")); err != nil {
		t.Fatal(err)
	}
	checkHostile(cctx, t, "chat panel", "#log .msg.agent .body .md")
}

func checkHostile(ctx context.Context, t *testing.T, where, sel string) {
	t.Helper()
	box := `document.querySelector(` + jsString(sel) + `)`
	var r struct {
		Pwned    bool
		Elements []string
		Links    []string
		NoLinks  []string
		Text     string
		Lines    int
		First    string
	}
	evalJSON(ctx, t, `(box => ({
  Pwned: window.pwned !== undefined,
  Elements: [...box.querySelectorAll("img, script, iframe, object, embed, style, link, [onerror], [onclick]")].map(e => e.outerHTML),
  Links: [...box.querySelectorAll("a")].map(a => a.getAttribute("href")),
  NoLinks: [...box.querySelectorAll(".md-nolink")].map(s => s.textContent + s.nextSibling.textContent),
  Text: box.textContent,
  Lines: box.querySelectorAll("pre").length === 1 ? box.querySelector("pre code").textContent.split("\n").length : -1,
  First: box.querySelector("pre code")?.textContent.split("\n")[0],
}))(`+box+`)`, &r)
	if r.Pwned || len(r.Elements) > 0 || len(r.Links) > 0 {
		t.Fatalf("%s: the reply's markup reached the page: pwned=%v elements=%v links=%v", where, r.Pwned, r.Elements, r.Links)
	}
	wantNo := []string{"x (javascript:alert(1))", "y (javascript:window.pwned=3)", "z (data:text/html,<script>window.pwned=6</script>)"}
	if strings.Join(r.NoLinks, "|") != strings.Join(wantNo, "|") {
		t.Errorf("%s: links not opened: %q, want %q", where, r.NoLinks, wantNo)
	}
	for _, s := range []string{`<img src=x onerror="window.pwned=1">`, "<script>window.pwned=4</script>", "file <U+202E>gnp.exe and <!-- an HTML comment -->",
		`<a href="javascript:window.pwned=5">raw</a> <iframe src="javascript:window.pwned=7"></iframe>`} {
		if !strings.Contains(r.Text, s) {
			t.Errorf("%s: %q not shown as text in %.300q", where, s, r.Text)
		}
	}
	if strings.ContainsRune(r.Text, '\u202e') {
		t.Errorf("%s: a right-to-left override reached the page as itself", where)
	}
	if r.Lines != 10000 || r.First != `<img src=x onerror="window.pwned=8">` {
		t.Errorf("%s: the code block: %d lines, first %q; want 10000, the markup as text", where, r.Lines, r.First)
	}
	// A click on a javascript: link's text opens nothing and runs nothing
	// (the one that would set window.pwned, not the alert, which would
	// hold the page).
	var pwned bool
	if err := within(ctx, 0,
		chromedp.Evaluate(box+`.querySelectorAll(".md-nolink")[1].id = "click-me"`, nil),
		chromedp.Click(`#click-me`, chromedp.ByQuery),
		chromedp.Evaluate(`window.pwned !== undefined`, &pwned),
	); err != nil || pwned {
		t.Errorf("%s: a click on the javascript: link: %v (pwned %v)", where, err, pwned)
	}
}
