package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/relay-baton/relay-baton/events"
)

// The page shows bidi and zero-width characters as visible marks, as the
// terminal does (render.Inert): a right-to-left override in a reply, a
// notice or a file opened from the timeline is shown as <U+202E>, never
// applied; control characters are shown in caret notation.
func TestPageShowsHiddenCharacters(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	fb, base, _ := serveFake(t)
	ctx := browser(t)
	// The fake backend sends what it is given, as a backend that did not
	// sanitize would: the page must not rely on the server alone.
	reply := "reply A\u202eB\u200bC\u2066D\x1b[2JE\u009bF"
	err := chromedp.Run(ctx, // not within: the first Run starts the browser, and ends it with its context
		chromedp.Navigate(pageURL(t, base)),
		chromedp.WaitReady(`#target option[value="`+sid+`"]`, chromedp.ByQuery),
		chromedp.WaitEnabled(`#text`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	fb.watch <- Event{Name: "text", Data: map[string]string{"text": reply}}
	fb.watch <- Event{Name: "notice", Data: map[string]string{"text": "notice \u202eX"}}
	fb.watch <- Event{Name: "activity", Data: map[string]string{"tool": "Bash\u202e", "detail": "ls\u200b"}}
	var got string
	err = within(ctx, 0,
		waitText(`#log`, "notice <U+202E>X"),
		waitText(`#log`, "reply A<U+202E>B<U+200B>C<U+2066>D^[[2JE\\u009bF"),
		waitText(`#log`, "Bash<U+202E> — ls<U+200B>"),
		chromedp.Text(`#log`, &got, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("marks in the chat: %v", err)
	}
	for _, raw := range []string{"\u202e", "\u200b", "\u2066", "\x1b", "\u009b"} {
		if strings.Contains(got, raw) {
			t.Errorf("the chat shows %q live: %q", raw, got)
		}
	}
}

// A hostile plan.md opened from the timeline, and an event's text, show
// their controls as marks in the browser too.
func TestPageShowsHostileRefAsMarks(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	fr, lg, base := newRoomServer(t)
	if err := os.WriteFile(filepath.Join(fr.dir, "plan.md"), []byte(hostilePlan), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := events.New("s", events.RoleRelayBaton, events.KindPlan, "plan.md written \u202eby claude")
	ev.Refs = map[string]string{"plan": "plan.md"}
	if err := lg.Append(ev); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	var ref, turns string
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL(t, base)),
		waitText(`#turns`, "plan.md written <U+202E>by claude"),
		chromedp.Click(`#turns .ref`, chromedp.ByQuery),
		waitText(`#reftext`, "<U+202E>"),
		chromedp.Text(`#reftext`, &ref, chromedp.ByQuery),
		chromedp.Text(`#turns`, &turns, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if want := "A^[[2JB^[]52;c;cHduZWQ=^GC^GD\\u009b31mE\\x9bF<U+202E>G<U+200B>H^M"; !strings.Contains(ref, want) {
		t.Errorf("plan.md on the page: %q, want %q", ref, want)
	}
	for _, raw := range []string{"\u202e", "\u200b", "\x1b", "\x07", "\u009b"} {
		if strings.Contains(ref+turns, raw) {
			t.Errorf("the page shows %q live: %q %q", raw, ref, turns)
		}
	}
}

// After serve restarts (a new secret), the open page's cookie is refused:
// the page says to open the address serve printed, not "unreachable".
func TestPageSaysWhenItsSecretIsStale(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	_, base, _ := serveFake(t)
	ctx := browser(t)
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL(t, base)),
		waitText(`#conn`, "server connected"),
		chromedp.ActionFunc(func(ctx context.Context) error {
			// What a restarted serve's page holds: a cookie of the old secret.
			return network.SetCookie(CookieName(portOf(t, base)), NewToken()).WithURL(base + "/").WithHTTPOnly(true).Do(ctx)
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := within(ctx, 0, waitText(`#reason`, "open the whole address it printed"), waitText(`#conn`, "server unreachable")); err != nil {
		t.Fatalf("stale secret: %v", err)
	}
}
