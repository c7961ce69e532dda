package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// The tests that are not about the secret reach their servers with it:
// each helper that starts a server registers the server's secret for its
// address (register), and http.DefaultClient (set in TestMain) adds it as
// "Authorization: Bearer" to every request to that address that carries no
// secret of its own. A client without the secret (another local account)
// is bareClient, which uses http.DefaultTransport directly.

var testTokens sync.Map // "127.0.0.1:PORT" -> secret

// register records the secret of the server at base (http://127.0.0.1:PORT).
func register(tb testing.TB, base, token string) {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || token == "" {
		tb.Fatalf("register %q: %v", base, err)
	}
	testTokens.Store(u.Host, token)
}

type withSecret struct{ rt http.RoundTripper }

func (a withSecret) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, ok := testTokens.Load(r.URL.Host)
	if ok && r.Header.Get("Authorization") == "" && !r.URL.Query().Has("token") {
		if _, err := r.Cookie("relay-baton-" + r.URL.Port()); err != nil {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok.(string))
		}
	}
	return a.rt.RoundTrip(r)
}

// bareClient has no secret: another account on the machine.
var bareClient = &http.Client{Transport: http.DefaultTransport}

// servedURL is the address `serve` prints: http://127.0.0.1:PORT/?token=SECRET.
var servedURL = regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?token=([A-Za-z0-9_-]{43})`)

// servedAt finds the address with its secret in serve's first line,
// registers the secret and returns the base address and the full URL.
func servedAt(tb testing.TB, line string) (base, full string) {
	tb.Helper()
	m := servedURL.FindStringSubmatch(line)
	if m == nil {
		tb.Fatalf("no address with a secret in %q", line)
	}
	register(tb, m[1], m[2])
	return m[1], m[0]
}

// pageURL is the address a browser opens first: the page with its secret
// (the server sets the cookie and sends the browser on to base/).
func pageURL(tb testing.TB, base string) string {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	tok, ok := testTokens.Load(u.Host)
	if !ok {
		tb.Fatalf("no secret registered for %s", base)
	}
	return base + "/?token=" + tok.(string)
}

// portOf is the port of base (http://127.0.0.1:PORT).
func portOf(tb testing.TB, base string) int {
	tb.Helper()
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
