package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
)

// The page's secret. The loopback bind keeps other machines out, not other
// accounts on this one: every local user can connect to 127.0.0.1. So every
// route (the page, every /api/ read, stream and post) needs the secret
// `serve` made when it started and printed in the page's address. A browser
// brings it once as ?token=, gets it back as an HttpOnly, SameSite=Strict
// cookie and is sent on to the address without it (so it does not stay in
// the address bar); a script brings it as `Authorization: Bearer` or
// ?token=.

// tokenParam is the query parameter that carries the secret.
const tokenParam = "token"

// Token is the page's secret (made by New, one per start). It is never
// logged: print it only as part of URL, for the user.
func (s *Server) Token() string { return s.token }

// URL is the page's address with its secret: what `serve` prints and
// --open opens.
func (s *Server) URL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.port) + "/?" + tokenParam + "=" + s.token
}

// CookieName is the cookie that carries the secret for the server on port.
// Cookies are not kept apart by port, so the name holds it: two servers on
// one machine do not overwrite each other's.
func CookieName(port int) string { return "relay-baton-" + strconv.Itoa(port) }

// tokenOK compares one presented secret with the server's in constant time
// (both hashed first, so not even the length is compared early).
func (s *Server) tokenOK(v string) bool {
	if v == "" {
		return false
	}
	sum := sha256.Sum256([]byte(v))
	return subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1
}

// authorized reports whether r carries the secret (cookie, Bearer or
// ?token=), and whether it came in the query (so the page's address is to
// be cleaned of it).
func (s *Server) authorized(r *http.Request) (ok, inQuery bool) {
	if c, err := r.Cookie(CookieName(s.port)); err == nil && s.tokenOK(c.Value) {
		ok = true
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") && s.tokenOK(strings.TrimSpace(h[7:])) {
		ok = true
	}
	if q := r.URL.Query(); q.Has(tokenParam) {
		inQuery = true
		if s.tokenOK(q.Get(tokenParam)) {
			ok = true
		}
	}
	return ok, inQuery
}

// unauthorizedText says what to do; it names no secret.
func (s *Server) unauthorizedText() string {
	return fmt.Sprintf("this page needs the secret relay-baton serve printed when it started: open the whole address it printed (http://127.0.0.1:%d/?token=...), or send the secret as \"Authorization: Bearer <secret>\"; a new start of relay-baton serve makes a new secret", s.port)
}

// refuseUnauthorized answers 401 (an HTML page for the page's own address,
// JSON for the rest) and logs the refusal without anything the request
// carried but its method and route (loggedPath): the first of each, then
// every 100th.
func (s *Server) refuseUnauthorized(w http.ResponseWriter, r *http.Request) {
	path := loggedPath(r.URL.Path)
	s.logMu.Lock()
	key := "auth " + path
	n := s.refused[key] + 1
	if len(s.refused) < 1000 || n > 1 {
		s.refused[key] = n
	}
	s.logMu.Unlock()
	if n == 1 || n%100 == 0 {
		s.logf("refused %s %q without the page's secret (%d so far for that path): open the address serve printed", r.Method, path, n)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="relay-baton serve"`)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		fail(w, http.StatusUnauthorized, s.unauthorizedText())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>relay-baton · secret needed</title></head>
<body style="font:15px/1.5 system-ui,sans-serif;max-width:44em;margin:3em auto;padding:0 1em">
<h1 style="font-size:18px">This page needs its secret</h1>
<p>Open the whole address relay-baton serve printed when it started,
<code>http://127.0.0.1:%d/?token=…</code> (or start it with <code>relay-baton serve --open</code>).
Each start makes a new secret: after a restart, open the new address.</p>
<p>Other accounts on this machine can reach 127.0.0.1 too; the secret is what keeps them out.</p>
</body></html>
`, s.port)
}

// setCookie gives the browser the secret as a cookie only the server reads
// (HttpOnly), sent by no other site's request (SameSite=Strict), for every
// path of this server, for this browser session.
func (s *Server) setCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(s.port), Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// sendOn answers the page's address with the secret: a page that sends
// the browser on to u (the address without it) by a refresh of its own.
// Not a 303: a browser that came from another site (a link in a mail, the
// file --open writes) does not send a SameSite=Strict cookie anywhere along
// that navigation's redirects, so the page would answer 401; a refresh is a
// new navigation started by this server's own page, which does send it.
// The refresh needs no script (the CSP allows none inline).
func (s *Server) sendOn(w http.ResponseWriter, u string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	e := html.EscapeString(u)
	fmt.Fprintf(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>relay-baton</title></head>
<body style="font:15px/1.5 system-ui,sans-serif;margin:3em auto;max-width:44em"><p><a href="%s">Open the relay-baton page</a></p></body></html>
`, e, e)
}

// withoutToken is r's address with ?token= removed (the other parameters
// kept), to send the browser on to. Only the page's own path "/" is sent
// on (a path such as //host would be another site's address).
func withoutToken(r *http.Request) string {
	q := r.URL.Query()
	q.Del(tokenParam)
	u := r.URL.Path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// routes are the paths the server answers; loggedPath logs only these.
var routes = map[string]bool{"/": true, "/app.js": true, "/api/targets": true, "/api/log": true, "/api/send": true,
	"/api/events": true, "/api/timeline": true, "/api/context": true, "/api/room/stream": true, "/api/ref": true,
	"/api/room/run": true, "/api/room/answer": true, "/api/room/stop": true, "/api/room/state": true, "/api/room/console": true, "/api/room/complete": true}

// loggedPath is what a log line says of a request's path: the path when it
// is one of the server's routes, else "another path". A path is the
// requester's text: pasted wrong, it could hold the secret, which is never
// logged.
func loggedPath(p string) string {
	if routes[p] {
		return p
	}
	return "another path"
}
