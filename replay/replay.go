// Package replay prints the conversation log as a timeline: filtered,
// numbered, coloured by role, as text or JSON, optionally following what is
// appended. The replay command and the room's /replay both use it.
package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/spf13/pflag"
)

// Options says what Run shows. File is the conversation.jsonl to
// read; the filters combine with AND, each list with OR.
type Options struct {
	File     string
	JSON     bool
	Sessions []string
	Kinds    []string
	Roles    []string
	Since    time.Time // zero: no lower bound
	Limit    int       // >0: only the newest Limit events, renumbered from 1
	Follow   bool      // keep printing appended events until ctx is done
	Color    bool
	Now      func() time.Time // for --since durations; nil means time.Now

	since string // the --since text, resolved by the func AddFlags returns
}

// EmptyLogLine is what replay prints when there is nothing to show.
const EmptyLogLine = "no conversation events. (nothing recorded yet)"

// AddFlags defines replay's flags on fs, bound to o. Call the returned
// function after fs.Parse: it validates the values and resolves --since
// (a duration back from now such as 90m, 2h or 3d, or an RFC 3339 time, or a
// date). Its errors are usage errors.
func AddFlags(fs *pflag.FlagSet, o *Options) func() error {
	fs.BoolVar(&o.JSON, "json", false, "print {entries, summary} as JSON (with --follow: one event per line)")
	fs.StringSliceVar(&o.Sessions, "session", nil, "only events of these session ids (comma-separated or repeated)")
	fs.StringSliceVar(&o.Kinds, "kind", nil, "only these kinds: "+strings.Join(events.KindNames(), ", "))
	fs.StringSliceVar(&o.Roles, "role", nil, "only these roles: "+strings.Join(events.RoleNames(), ", "))
	fs.StringVar(&o.since, "since", "", "only events at or after a time: a duration back from now (90m, 2h, 3d) or an RFC 3339 time")
	fs.IntVar(&o.Limit, "limit", 0, "only the newest N events, numbered from 1 (0: all)")
	fs.BoolVarP(&o.Follow, "follow", "f", false, "keep printing events as they are appended, until Ctrl-C")
	fs.StringVar(&o.File, "file", "", "read this log instead of <repo>/.ai-session/conversation.jsonl")
	return func() error {
		if o.Limit < 0 {
			return fmt.Errorf("--limit must be 0 or more, not %d", o.Limit)
		}
		var err error
		if o.Kinds, err = checkNames("--kind", "kind", o.Kinds, events.KindNames()); err != nil {
			return err
		}
		if o.Roles, err = checkNames("--role", "role", o.Roles, events.RoleNames()); err != nil {
			return err
		}
		o.Sessions = trimAll(o.Sessions)
		if o.since != "" {
			now := time.Now
			if o.Now != nil {
				now = o.Now
			}
			t, err := ParseSince(o.since, now())
			if err != nil {
				return err
			}
			o.Since = t
		}
		return nil
	}
}

// ParseSince reads a --since value: a duration back from now ("90m", "2h",
// "3d", "1h30m"), an RFC 3339 timestamp, or a date (YYYY-MM-DD, UTC).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: give a positive duration (how far back), e.g. 2h", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (90m, 2h, 3d) nor a time (2026-05-29T10:00:00Z or 2026-05-29)", s)
}

func trimAll(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func checkNames(flag, what string, in, valid []string) ([]string, error) {
	out := trimAll(in)
	for _, s := range out {
		found := false
		for _, v := range valid {
			if s == v {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: unknown %s %q (known: %s)", flag, what, s, strings.Join(valid, ", "))
		}
	}
	return out, nil
}

// filter is the compiled form of the options' filters.
type filter struct {
	sessions, kinds, roles map[string]bool
	since                  time.Time
}

func set(list []string) map[string]bool {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func (f *filter) match(e *events.Event) bool {
	if f.roles != nil && !f.roles[string(e.Role)] {
		return false
	}
	if f.kinds != nil && !f.kinds[string(e.Kind)] {
		return false
	}
	if f.sessions != nil && !f.sessions[e.SessionID] {
		return false
	}
	if !f.since.IsZero() && e.Time().Before(f.since) {
		return false
	}
	return true
}

// summary counts the events shown.
type summary struct {
	Total   int            `json:"total"`
	ByRole  map[string]int `json:"byRole"`
	ByKind  map[string]int `json:"byKind"`
	FirstTS *string        `json:"firstTs"` // null when there are no entries
	LastTS  *string        `json:"lastTs"`
	Skipped skipped        `json:"skipped"`

	first, last string
	// runs and spent: the agent runs that match the filters (before
	// --limit) and what they cost, for the text footer.
	runs  int
	spent events.Usage
}

type skipped struct {
	Malformed int `json:"malformed"`
	TooLong   int `json:"tooLong"`
}

func newSummary() *summary {
	return &summary{ByRole: map[string]int{}, ByKind: map[string]int{}}
}

func (s *summary) add(e *events.Event) {
	s.Total++
	s.ByRole[string(e.Role)]++
	s.ByKind[string(e.Kind)]++
	if s.Total == 1 {
		s.first = e.TS
	}
	s.last = e.TS
}

// counts renders m as "{a: 1, b: 2}", known names first in their order.
func counts(m map[string]int, order []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, k := range order {
		if n := m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", k, n))
		}
		seen[k] = true
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (s *summary) footer() string {
	noun := "events"
	if s.Total == 1 {
		noun = "event"
	}
	line := fmt.Sprintf("%d %s; roles %s; kinds %s", s.Total, noun, render.InertLine(counts(s.ByRole, events.RoleNames())), render.InertLine(counts(s.ByKind, events.KindNames())))
	if s.runs > 0 {
		line += fmt.Sprintf("\nagent runs: %s, %s", render.Count(s.runs, "run"), render.UsageWords(s.spent))
	}
	return line
}

// runUsage is an agent run's own usage as its agent_run event logs it; ok
// is false for any other event and for a run that did not run.
func runUsage(e *events.Event) (events.Usage, bool) {
	if e.Kind != events.KindAgentRun {
		return events.Usage{}, false
	}
	m, err := events.MetaOf[events.AgentRunMeta](e)
	if err != nil || !m.Ran {
		return events.Usage{}, false
	}
	return events.Usage{CostUSD: m.CostUSD, InputTokens: m.InputTokens, CachedInputTokens: m.CachedInputTokens, OutputTokens: m.OutputTokens}, true
}

// Ring keeps the newest n events in constant memory.
type Ring struct {
	buf  []events.Event
	next int
	full bool
}

// NewRing is a Ring that keeps the newest n events (n > 0).
func NewRing(n int) *Ring { return &Ring{buf: make([]events.Event, 0, n)} }

// Push adds e, dropping the oldest event when the ring is full.
func (r *Ring) Push(e events.Event) {
	if !r.full && len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, e)
		if len(r.buf) == cap(r.buf) {
			r.full = true
		}
		return
	}
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
}

// Each calls fn on the events kept, oldest first.
func (r *Ring) Each(fn func(*events.Event)) {
	for i := range r.buf {
		fn(&r.buf[(r.next+i)%len(r.buf)])
	}
}

// Run writes the conversation timeline of o.File to w: in text, lines
// "N. [ts] who kind: text" then a blank line and a summary footer; with
// o.JSON, one {entries, summary} document. With o.Limit only the newest
// Limit matching events are kept (in constant memory) and numbered from 1.
// Skipped lines (malformed, not an event, over 1 MiB) are reported after the
// footer (in JSON, counted in summary.skipped). With o.Follow it then keeps
// printing appended events until ctx is done, and returns nil.
//
// A missing log is an error wrapping events.ErrNoLog, except with o.Follow
// when its folder exists (it is then awaited).
func Run(ctx context.Context, w io.Writer, o Options) error {
	if o.File == "" {
		return errors.New("replay: no conversation log given")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	r := &replayer{
		o:   o,
		w:   bw,
		f:   filter{sessions: set(o.Sessions), kinds: set(o.Kinds), roles: set(o.Roles), since: o.Since},
		sum: newSummary(),
	}
	if o.Limit > 0 {
		r.ring = NewRing(o.Limit)
	}
	st, off, err := events.ReadFileFrom(o.File, 0, o.Follow, r.take)
	missing := errors.Is(err, events.ErrNoLog)
	if err != nil && !(missing && o.Follow) {
		bw.Flush()
		return err
	}
	if r.ring != nil {
		r.ring.Each(func(e *events.Event) { r.show(e) })
		r.ring = nil
	}
	if !o.Follow {
		r.finish(st)
		return bw.Flush()
	}

	// Follow: the backlog is out; now stream what is appended.
	if !o.JSON {
		if r.sum.Total == 0 {
			fmt.Fprintln(bw, EmptyLogLine)
		}
		fmt.Fprintf(bw, "-- following %s (Ctrl-C to stop) --\n", o.File)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fst, err := events.Follow(ctx, o.File, off, func(e events.Event) error {
		if err := r.take(e); err != nil {
			return err
		}
		return bw.Flush()
	})
	if st.FirstSkipped == 0 && fst.FirstSkipped > 0 {
		st.FirstSkipped = st.Lines + fst.FirstSkipped // approximate: blank lines are not counted
		st.FirstError = fst.FirstError
	}
	st.Lines += fst.Lines
	st.Malformed += fst.Malformed
	st.TooLong += fst.TooLong
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		bw.Flush()
		return err
	}
	if !o.JSON {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, r.sum.footer())
		r.reportSkipped(st)
	}
	return bw.Flush()
}

type replayer struct {
	o    Options
	w    *bufio.Writer
	f    filter
	sum  *summary
	ring *Ring
	buf  []byte
	n    int // entries printed
}

func (r *replayer) take(e events.Event) error {
	if !r.f.match(&e) {
		return nil
	}
	if u, ok := runUsage(&e); ok {
		r.sum.runs++
		r.sum.spent = r.sum.spent.Plus(u)
	}
	if r.ring != nil {
		r.ring.Push(e)
		return nil
	}
	r.show(&e)
	return nil
}

func (r *replayer) show(e *events.Event) {
	r.n++
	r.sum.add(e)
	r.buf = r.buf[:0]
	if r.o.JSON {
		if r.o.Follow {
			r.buf = events.AppendJSON(r.buf, *e)
			r.buf = append(r.buf, '\n')
		} else {
			if r.n == 1 {
				r.buf = append(r.buf, `{"entries":[`...)
			} else {
				r.buf = append(r.buf, ',')
			}
			r.buf = append(r.buf, "\n  "...)
			r.buf = events.AppendJSON(r.buf, *e)
		}
	} else {
		r.buf = appendEvent(r.buf, r.n, e, r.o.Color)
		r.buf = append(r.buf, '\n')
	}
	r.w.Write(r.buf)
}

func (r *replayer) finish(st events.Stats) {
	r.sum.Skipped = skipped{Malformed: st.Malformed, TooLong: st.TooLong}
	if r.sum.Total > 0 {
		r.sum.FirstTS, r.sum.LastTS = &r.sum.first, &r.sum.last
	}
	if r.o.JSON {
		if r.n == 0 {
			r.w.WriteString(`{"entries":[`)
		} else {
			r.w.WriteString("\n")
		}
		b, _ := json.MarshalIndent(r.sum, "", "  ")
		r.w.WriteString("],\n\"summary\": ")
		r.w.Write(events.EscapeJSON(b))
		r.w.WriteString("\n}\n")
		return
	}
	if r.sum.Total == 0 {
		if st.Events > 0 {
			fmt.Fprintf(r.w, "no conversation events match the filters (%d in the log).\n", st.Events)
		} else {
			fmt.Fprintln(r.w, EmptyLogLine)
		}
	} else {
		fmt.Fprintln(r.w)
		fmt.Fprintln(r.w, r.sum.footer())
	}
	r.reportSkipped(st)
}

func (r *replayer) reportSkipped(st events.Stats) {
	if st.Skipped() == 0 {
		return
	}
	var why []string
	if st.Malformed > 0 {
		why = append(why, fmt.Sprintf("%d malformed", st.Malformed))
	}
	if st.TooLong > 0 {
		why = append(why, fmt.Sprintf("%d over %d MiB", st.TooLong, events.MaxReadLineBytes>>20))
	}
	lines := "lines"
	if st.Skipped() == 1 {
		lines = "line"
	}
	msg := fmt.Sprintf("skipped %d %s of %s (%s)", st.Skipped(), lines, filepath.Base(r.o.File), strings.Join(why, ", "))
	if st.FirstSkipped > 0 {
		msg += fmt.Sprintf("; first at line %d", st.FirstSkipped)
		if st.FirstError != "" && st.Malformed > 0 {
			msg += ": " + st.FirstError
		}
	}
	if r.o.Color {
		msg = warnColor.Sprint(msg)
	}
	fmt.Fprintln(r.w, msg)
}

// Role colours. EnableColor makes them ignore color.NoColor: FormatEvent's
// color argument decides.
var (
	replayColors = forcedRoleColors()
	faint        = forced(color.Faint)
	warnColor    = forced(color.FgYellow)
)

// forcedRoleColors builds replay's label colours from the renderers' one
// per-role colour table, in bold.
func forcedRoleColors() map[events.Role]*color.Color {
	m := make(map[events.Role]*color.Color, len(render.RoleColors))
	for r, a := range render.RoleColors {
		m[r] = forced(a, color.Bold)
	}
	return m
}

func forced(attrs ...color.Attribute) *color.Color {
	c := color.New(attrs...)
	c.EnableColor()
	return c
}

// FormatEvent renders one event as replay does: "N. [ts] who kind: text",
// where who is "role/agent" when meta.agent differs from the role. Control
// characters in the text are made visible (^[ for ESC: render.Inert) so a
// log cannot drive the terminal; each continuation line of a multi-line
// text is indented and carries who is speaking ("    who │ ..."). With
// color, who is coloured by role.
func FormatEvent(n int, e events.Event, color bool) string {
	return string(appendEvent(nil, n, &e, color))
}

// FormatLive renders one event as a live screen shows another screen's
// turn: "from · hh:mm:ss who kind: text", the clock local and to the second,
// each continuation line carrying from and who ("  from │ who │ ..."), so
// every line says where it came from. Made inert as FormatEvent.
func FormatLive(from string, e events.Event, color bool) string {
	from = render.InertLine(from)
	clock := render.InertLine(e.TS)
	if t, err := time.Parse(time.RFC3339Nano, e.TS); err == nil {
		clock = t.Local().Format("15:04:05")
	}
	f := form{stamp: from + " · " + clock, cont: "\n  " + from + " │ "}
	return string(appendEventForm(nil, &e, color, f))
}

// form is how appendEventForm starts an event's first line (stamp, in
// place of "N. [ts]") and its continuation lines (cont, before who).
type form struct{ stamp, cont string }

// isReply reports whether e holds an agent's or a session's reply text.
func isReply(e *events.Event) bool {
	switch e.Role {
	case events.RoleClaude, events.RoleCodex, events.RoleOrchestrator:
		return e.Kind == events.KindMessage || e.Kind == events.KindChatReply
	}
	return false
}

func appendEvent(b []byte, n int, e *events.Event, colored bool) []byte {
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ". "...)
	if colored {
		b = append(b, faint.Sprint("["+e.TS+"]")...)
	} else {
		b = append(b, '[')
		b = append(b, e.TS...)
		b = append(b, ']')
	}
	return appendEventForm(b, e, colored, form{})
}

// appendEventForm appends e after its stamp: "who kind: text", with
// continuation lines as f says ("\n    who │ " when f is zero).
func appendEventForm(b []byte, e *events.Event, colored bool, f form) []byte {
	if f.stamp != "" {
		if colored {
			b = append(b, faint.Sprint(f.stamp)...)
		} else {
			b = append(b, f.stamp...)
		}
	}
	if f.cont == "" {
		f.cont = "\n    "
	}
	b = append(b, ' ')
	agent := events.MetaAgent(e)
	if agent == string(e.Role) {
		agent = ""
	}
	whoStart := len(b)
	if c := replayColors[e.Role]; colored && c != nil {
		who := string(e.Role)
		if agent != "" {
			who += "/" + render.InertLine(agent)
		}
		b = append(b, c.Sprint(who)...)
	} else {
		b = append(b, render.InertLine(string(e.Role))...)
		if agent != "" {
			b = append(b, '/')
			b = append(b, render.InertLine(agent)...)
		}
	}
	who := string(b[whoStart:])
	b = append(b, ' ')
	b = append(b, render.InertLine(string(e.Kind))...)
	b = append(b, ": "...)
	text := e.Text
	safe := false
	if colored && isReply(e) { // as the room shows it: Markdown rendered
		if strings.Contains(text, "\n") {
			text = render.MarkdownText(text)
		} else { // a reply folded to one line: its blocks are gone
			text = render.Inline(render.Inert(text))
		}
		safe = true
	}
	for {
		line, rest, more := strings.Cut(text, "\n")
		if safe {
			b = append(b, line...)
		} else {
			b = render.AppendInert(b, line)
		}
		if !more {
			return appendCost(b, e)
		}
		b = append(b, f.cont...)
		b = append(b, who...)
		b = append(b, " │ "...)
		text = rest
	}
}

// appendCost appends " · $0.00014, 10 in / 5 out tokens" to an agent run's
// line: what the run cost, as logged.
func appendCost(b []byte, e *events.Event) []byte {
	if u, ok := runUsage(e); ok && u != (events.Usage{}) {
		b = append(b, " · "...)
		b = append(b, render.UsageWords(u)...)
	}
	return b
}
