// Package server is relay-baton's localhost chat panel: an HTTP server bound
// to 127.0.0.1 that serves one embedded page and a small JSON + SSE API over
// the same session-chat file protocol the room uses. It holds no state of
// its own:
//
//	POST /api/send ─► conversation.Send (then Follow, so the reply reaches log.jsonl)
//	GET /api/events ◄─ watchQueueOf (queue, deliveries) + Tail ─► render.Panel
//	GET /api/targets, /api/log ◄─ conversation.ListTargets, Session.ReadLog
//
// Every string it streams went through render.Inert; encoding/json escapes
// <, > and &, and the page inserts text with textContent only.
package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/relay-baton/relay-baton/conversation/chatlog"
	"github.com/relay-baton/relay-baton/events"
)

//go:embed static
var static embed.FS

// DefaultPort is the port `relay-baton serve` listens on by default.
const DefaultPort = 4181

// MaxBody caps a POST body.
const MaxBody = 96 << 10

// Target is one session the panel can talk to.
type Target struct {
	ID             string    `json:"id"`
	Lead           bool      `json:"lead"`
	ChatCapable    bool      `json:"chatCapable"`
	QueueDepth     int       `json:"queueDepth"`
	OldestAgeMs    int64     `json:"oldestAgeMs,omitempty"`
	LastActivity   time.Time `json:"lastActivity,omitzero"`
	TranscriptPath string    `json:"transcriptPath,omitempty"`
	Cwd            string    `json:"cwd,omitempty"`
	// State is where a message sent now would go, in the words of
	// `relay-baton targets` ("busy, socket: between tool calls", "waiting
	// for its user (a permission prompt)", ...).
	State     string `json:"state,omitempty"`
	Delivers  string `json:"delivers,omitempty"`
	NeedsUser string `json:"needsUser,omitempty"`
}

// LogEntry is one line of a session's chat log (log.jsonl).
type LogEntry = chatlog.Entry

// Sent is the answer to a send.
type Sent struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	Ahead     int       `json:"ahead"` // messages queued before this one
}

// Event is one server-sent event: Name is the SSE event name (queued,
// delivered, thinking, activity, text, end_turn, notice), Data its JSON.
type Event struct {
	Name string
	Data any
}

// Backend is what the server needs from the session-chat protocol.
type Backend interface {
	// Targets and Send end what blocks (the read of Claude Code's
	// registry, the hand-over to a session) when ctx ends.
	Targets(ctx context.Context) ([]Target, error)
	Log(session string) ([]LogEntry, error)
	Send(ctx context.Context, session, from, text string) (Sent, error)
	// Check returns nil when session is a known target (else a wrapped
	// ErrUnknownSession or ErrBadRequest).
	Check(session string) error
	// Watch streams the session's chat activity to fn until ctx is done.
	// It calls ready once, when it has taken its starting points (what was
	// delivered and how long the transcript is): what happens after that
	// reaches fn. The stream is opened to the page only then.
	Watch(ctx context.Context, session string, ready func(), fn func(Event)) error
}

// ErrUnknownSession is returned (wrapped) by a Backend for a session it does
// not know; the server answers 404.
var ErrUnknownSession = errors.New("unknown session")

// ErrBadRequest is returned (wrapped) by a Backend for a request it refuses
// (an oversized message, an invalid id); the server answers 400.
var ErrBadRequest = errors.New("bad request")

// Server is the HTTP handler.
type Server struct {
	b         Backend
	port      int
	keepAlive time.Duration
	mux       *http.ServeMux
	hosts     []string // the Host values this server answers to
	room      Room     // nil: chat only
	desk      Desk     // nil: the room is shown, not driven
	// token is the page's secret, made per start (NewToken); tokenSum its
	// SHA-256, what presented secrets are compared with (in constant time,
	// whatever their length).
	token    string
	tokenSum [32]byte
	redeem   sync.Once
	redeemed chan struct{} // closed when a browser first brings the secret in the page's address

	bodyTimeout time.Duration // how long a request body may take to arrive

	logMu   sync.Mutex
	logW    io.Writer
	refused map[string]int // refusals per Host value or Origin (for the log's rate)
	sse     chan struct{}  // one slot per SSE client
}

// BodyTimeout is how long a request body may take to arrive; a slower one
// is answered 408 and its connection closed. Headers have HeaderTimeout.
const BodyTimeout = 10 * time.Second

// HeaderTimeout is how long a request's headers may take to arrive;
// IdleTimeout how long a kept-alive connection waits for the next request.
const (
	HeaderTimeout = 10 * time.Second
	IdleTimeout   = 60 * time.Second
)

// MaxSSEClients caps the event streams open at once: each holds watchers
// on the session's folders and transcript.
const MaxSSEClients = 16

// TokenBytes is the size of the page's secret before encoding.
const TokenBytes = 32

// NewToken returns a new secret for the page: TokenBytes from crypto/rand,
// base64url without padding (43 characters, safe in a URL as is).
func NewToken() string {
	b := make([]byte, TokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// New returns a server for backend b that will listen on 127.0.0.1:port
// (the port is needed to check Origin headers), with a new secret
// (NewToken): every route answers 401 to a request that does not carry it
// (see Token and URL).
func New(b Backend, port int) *Server {
	p := strconv.Itoa(port)
	s := &Server{b: b, port: port, keepAlive: 15 * time.Second, mux: http.NewServeMux(), bodyTimeout: BodyTimeout,
		hosts: []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p},
		logW:  os.Stderr, refused: map[string]int{}, sse: make(chan struct{}, MaxSSEClients)}
	s.redeemed = make(chan struct{})
	s.token = NewToken()
	s.tokenSum = sha256.Sum256([]byte(s.token))
	page, _ := fs.Sub(static, "static")
	s.mux.Handle("GET /{$}", http.FileServerFS(page))
	s.mux.Handle("GET /app.js", http.FileServerFS(page))
	s.mux.HandleFunc("GET /api/targets", s.targets)
	s.mux.HandleFunc("GET /api/log", s.log)
	s.mux.HandleFunc("POST /api/send", s.send)
	s.mux.HandleFunc("GET /api/events", s.events)
	s.mux.HandleFunc("GET /api/timeline", s.timeline)
	s.mux.HandleFunc("GET /api/context", s.context)
	s.mux.HandleFunc("GET /api/room/stream", s.roomStream)
	s.mux.HandleFunc("GET /api/ref", s.ref)
	s.mux.HandleFunc("POST /api/room/run", s.deskRun)
	s.mux.HandleFunc("POST /api/room/answer", s.deskAnswer)
	s.mux.HandleFunc("POST /api/room/stop", s.deskStop)
	s.mux.HandleFunc("GET /api/room/state", s.deskState)
	s.mux.HandleFunc("GET /api/room/console", s.deskConsole)
	s.mux.HandleFunc("GET /api/room/complete", s.deskComplete)
	return s
}

// SetLog sets where refusals are logged (default standard error; nil
// silences them).
func (s *Server) SetLog(w io.Writer) {
	s.logMu.Lock()
	s.logW = w
	s.logMu.Unlock()
}

// logf writes one line to the log; untrusted values must be passed
// through %q so that no control byte reaches a terminal.
func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logW != nil {
		fmt.Fprintf(s.logW, "relay-baton serve: "+format+"\n", args...)
	}
}

// hostOK reports whether the request's Host names this server: a page
// served from another name that resolves to 127.0.0.1 (DNS rebinding) is
// same-origin with itself, so Origin alone does not protect the read routes.
func (s *Server) hostOK(host string) bool {
	for _, h := range s.hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// refuseHost answers a request for a foreign Host and logs it (the first
// refusal of each Host value, then every 100th).
func (s *Server) refuseHost(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if len(host) > 200 {
		host = host[:200]
	}
	s.logMu.Lock()
	n := s.refused[host] + 1
	if len(s.refused) < 1000 || n > 1 {
		s.refused[host] = n
	}
	s.logMu.Unlock()
	if n == 1 || n%100 == 0 {
		s.logf("refused %s %q for Host %q (%d so far from that name): only %s are served; a page on another name resolving to this machine (DNS rebinding) is refused",
			r.Method, loggedPath(r.URL.Path), host, n, strings.Join(s.hosts, ", "))
	}
	fail(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not this server: open http://127.0.0.1:%d/ (the whole address relay-baton serve printed, with its secret)", host, s.port))
}

// ServeHTTP implements http.Handler. Every route first checks Host; every
// /api/ route, reads and streams included, then checks Origin and
// Sec-Fetch-Site (sameOrigin), so a page on another site can neither read
// the conversation nor take the live streams' slots; then every route, the
// page included, needs the page's secret (authorized; 401 without it).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostOK(r.Host) {
		s.refuseHost(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/") && !s.sameOrigin(r) {
		origin, site := trim(r.Header.Get("Origin"), 200), trim(r.Header.Get("Sec-Fetch-Site"), 40)
		s.logMu.Lock()
		key := "origin " + origin + " " + site
		n := s.refused[key] + 1
		if len(s.refused) < 1000 || n > 1 {
			s.refused[key] = n
		}
		s.logMu.Unlock()
		if n == 1 || n%100 == 0 { // a page cannot flood the log
			s.logf("refused %s %q from Origin %q (Sec-Fetch-Site %q; %d so far): only this server's own page may use the API", r.Method, loggedPath(r.URL.Path), origin, site, n)
		}
		fail(w, http.StatusForbidden, "cross-origin request refused: open http://127.0.0.1:"+strconv.Itoa(s.port)+"/ (the whole address relay-baton serve printed, with its secret) and use the page served there")
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	ok, inQuery := s.authorized(r)
	if !ok {
		s.refuseUnauthorized(w, r)
		return
	}
	if inQuery && r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// The page's address as serve printed it: the secret moves into a
		// cookie and out of the address bar (sendOn).
		s.setCookie(w)
		s.redeem.Do(func() { close(s.redeemed) })
		s.sendOn(w, withoutToken(r))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Listen binds 127.0.0.1:port. There is deliberately no host option.
func Listen(port int) (net.Listener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("port %d on 127.0.0.1 is already in use: stop the other server or pick another port with --port", port)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves on ln until ctx is done, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: HeaderTimeout, IdleTimeout: IdleTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	w.Write(append(events.EscapeJSON(b), '\n'))
}

func fail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func backendError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownSession):
		fail(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrBadRequest):
		fail(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, ErrConflict):
		fail(w, http.StatusConflict, err.Error())
	default:
		fail(w, http.StatusInternalServerError, err.Error())
	}
}

func (s *Server) targets(w http.ResponseWriter, r *http.Request) {
	ts, err := s.b.Targets(r.Context())
	if err != nil {
		backendError(w, err)
		return
	}
	if ts == nil {
		ts = []Target{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"targets": ts})
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if id == "" {
		fail(w, http.StatusBadRequest, "session is required")
		return
	}
	var es []LogEntry
	var err error
	skipped := 0
	if ls, ok := s.b.(interface {
		LogSkipped(string) ([]LogEntry, int, error)
	}); ok {
		es, skipped, err = ls.LogSkipped(id)
	} else {
		es, err = s.b.Log(id)
	}
	if err != nil {
		backendError(w, err)
		return
	}
	if es == nil {
		es = []LogEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": es, "skipped": skipped})
}

// sameOrigin accepts only this server's own loopback origins. A browser
// sends Origin on every cross-origin fetch, EventSource and POST, and
// Sec-Fetch-Site on every request (none: typed in the address bar);
// neither header means a non-browser client, which the loopback bind
// already limits to local processes.
func (s *Server) sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	for _, h := range s.hosts {
		if strings.EqualFold(o, "http://"+h) {
			return true
		}
	}
	return false
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, "POST /api/send takes Content-Type: application/json")
		return
	}
	if !s.sameOrigin(r) {
		fail(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) // a body that trickles is cut off
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxBody))
			return
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			w.Header().Set("Connection", "close")
			fail(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s", s.bodyTimeout))
			return
		}
		fail(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	var req struct {
		Session string `json:"session"`
		Text    string `json:"text"`
		From    string `json:"from"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		fail(w, http.StatusBadRequest, "body is not JSON: "+err.Error())
		return
	}
	if req.Session == "" {
		fail(w, http.StatusBadRequest, "session is required")
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		fail(w, http.StatusBadRequest, "text is empty")
		return
	}
	if req.From == "" {
		req.From = "dashboard"
	}
	sent, err := s.b.Send(r.Context(), req.Session, req.From, req.Text)
	if err != nil {
		backendError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, sent)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session")
	if id == "" {
		fail(w, http.StatusBadRequest, "session is required")
		return
	}
	if err := s.b.Check(id); err != nil {
		backendError(w, err)
		return
	}
	f, release, ok := s.openStream(w, fmt.Sprintf("an event stream for session %q", id))
	if !ok {
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	evc := make(chan Event, 64)
	errc := make(chan error, 1)
	readyc := make(chan struct{})
	var once sync.Once
	go func() {
		errc <- s.b.Watch(ctx, id, func() { once.Do(func() { close(readyc) }) }, func(e Event) {
			select {
			case evc <- e:
			case <-ctx.Done():
			}
		})
	}()
	// The page sends only once its stream is open: the stream opens when
	// the watch has its starting points, so no delivery or reply falls
	// between the two.
	select {
	case <-readyc:
	case err := <-errc:
		errc <- err
	case <-ctx.Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": relay-baton\n\n")
	f.Flush()
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	for {
		select {
		case e := <-evc:
			writeEvent(w, e)
			f.Flush()
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			f.Flush()
		case err := <-errc:
			if err != nil && ctx.Err() == nil {
				writeEvent(w, Event{Name: "notice", Data: map[string]string{"text": "reply stream ended: " + err.Error()}})
				f.Flush()
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

func writeEvent(w io.Writer, e Event) {
	b, err := json.Marshal(e.Data)
	if err != nil {
		b = []byte(`{}`)
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Name, events.EscapeJSON(b))
}

// trim cuts s to n bytes for a log line.
func trim(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// openStream checks that w can stream and takes one of the MaxSSEClients
// stream slots (release gives it back); when it cannot, it answers the
// request itself. what names the stream in the server's log.
func (s *Server) openStream(w http.ResponseWriter, what string) (f http.Flusher, release func(), ok bool) {
	f, ok = w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "streaming unsupported")
		return nil, nil, false
	}
	select {
	case s.sse <- struct{}{}:
		return f, func() { <-s.sse }, true
	default:
		s.logf("refused %s: %d streams are open already", what, MaxSSEClients)
		w.Header().Set("Retry-After", "5")
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("too many live panels: %d event streams are open already (the cap); close other tabs of this page, then reload", MaxSSEClients))
		return nil, nil, false
	}
}
