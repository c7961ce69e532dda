package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A hostile page in the same browser, after the user opened the page (so
// the browser holds the cookie), served on another port of 127.0.0.1 (the
// same site: SameSite=Strict sends it the cookie): it can neither read the
// chat nor post a message, by fetch, by a form, or by an event stream.
func TestSecondOriginInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	fb, base, _ := serveFake(t)
	body := `{"session":"` + sid + `","text":"from the hostile page"}`
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/form" {
			w.Write([]byte(`<!doctype html><form id=f method=POST action="` + base + `/api/send" enctype="text/plain"><input name='` + body[:len(body)-2] + `' value='"}'></form><script>document.getElementById("f").submit()</script>`))
			return
		}
		w.Write([]byte(`<!doctype html><script>
const out = [];
(async () => {
  try { const r = await fetch("` + base + `/api/targets", { credentials: "include" }); out.push("read " + r.status + " " + (await r.text()).slice(0, 80)); } catch (e) { out.push("read blocked"); }
  try { await fetch("` + base + `/api/send", { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body: '` + body + `' }); out.push("text post sent"); } catch (e) { out.push("text post blocked"); }
  try { const r = await fetch("` + base + `/api/send", { method: "POST", credentials: "include", headers: { "Content-Type": "application/json" }, body: '` + body + `' }); out.push("json post " + r.status); } catch (e) { out.push("json post blocked"); }
  await new Promise((done) => { const es = new EventSource("` + base + `/api/events?session=` + sid + `", { withCredentials: true }); es.onopen = () => { out.push("stream open"); es.close(); done(); }; es.onerror = () => { out.push("stream refused"); es.close(); done(); }; });
  window.result = out.join("; ");
})();
</script>`))
	}))
	defer hostile.Close()
	if !strings.HasPrefix(hostile.URL, "http://127.0.0.1:") {
		t.Fatalf("hostile page at %s: want another port of 127.0.0.1 (the same site)", hostile.URL)
	}
	ctx := browser(t)
	var result string
	err := chromedp.Run(ctx,
		chromedp.Navigate(pageURL(t, base)),
		waitText(`#conn`, "server connected"),
		chromedp.Navigate(hostile.URL+"/"),
		chromedp.Poll(`window.result`, &result),
	)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(result, sid) || strings.Contains(result, "json post 200") || strings.Contains(result, "stream open") {
		t.Errorf("the hostile page got through: %s", result)
	}
	t.Logf("hostile page: %s", result)
	var text string
	if err := within(ctx, 0, chromedp.Navigate(hostile.URL+"/form"), waitText(`body`, "refused"), chromedp.Text(`body`, &text)); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	sent := append([]string(nil), fb.sent...)
	fb.mu.Unlock()
	if len(sent) != 0 {
		t.Fatalf("the hostile page posted: %v", sent)
	}
	// The user's own page still works in the same browser.
	if err := within(ctx, 0, chromedp.Navigate(base+"/"), waitText(`#conn`, "server connected")); err != nil {
		t.Fatalf("the user's page after the hostile one: %v", err)
	}
}
