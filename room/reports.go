package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fatih/color"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/prompts"
)

// StatusReport is what /status shows.
type StatusReport struct {
	Root         string   `json:"root"`
	SessionID    string   `json:"sessionId"`
	Active       string   `json:"activeAgent"`
	Plan         bool     `json:"plan"`
	PlanAgeSec   int64    `json:"planAgeSeconds,omitempty"`
	ChangedFiles []string `json:"changedFiles"`
	Head         string   `json:"head,omitempty"`
	LastRun      *LastRun `json:"lastRun,omitempty"`
	Diet         string   `json:"diet"`
	// PlanError says why plan.md cannot be read when it exists but is
	// not a plan (a FIFO, a folder, a link, too big).
	PlanError string `json:"planError,omitempty"`
}

// Status gathers the session status and logs a status event.
func (e *Engine) Status(ctx context.Context) StatusReport {
	s := StatusReport{Root: e.Root, SessionID: e.statusSession(), Active: e.Active, Head: head(ctx, e.Root), LastRun: e.last, Diet: e.Diet, ChangedFiles: []string{}}
	if s.LastRun == nil {
		// Nothing ran in this process (a one-shot status, a room just
		// opened): the log's last run, marked as such.
		if rs, err := ReadResume(e.LogPath(), 1); err == nil && rs.LastRun != nil {
			l := *rs.LastRun
			l.FromLog = true
			s.LastRun = &l
		}
	}
	if age, ok := e.planAge(); ok {
		s.Plan, s.PlanAgeSec = true, int64(age/time.Second)
	}
	if _, err := e.readPlan(); err != nil && !errors.Is(err, ErrNoPlan) {
		s.Plan, s.PlanAgeSec, s.PlanError = false, 0, err.Error()
	}
	if ch, err := changes(ctx, e.Root); err == nil {
		for _, c := range ch {
			s.ChangedFiles = append(s.ChangedFiles, strings.TrimSpace(c.Status)+" "+c.Path)
		}
	}
	e.emit(events.RoleRelayBaton, fmt.Sprintf("agent %s, plan %s, %s", s.Active, planWord(s), Count(len(s.ChangedFiles), "changed file")), nil,
		events.StatusMeta{Agent: s.Active, ChangedFiles: events.Int(len(s.ChangedFiles)), Plan: events.Bool(s.Plan)})
	return s
}

// statusSession is the room session a status names: this room's own when
// it records to the log, else (a one-shot status) the session of the log's
// newest event, "" when the log has none. It never makes one up.
func (e *Engine) statusSession() string {
	if e.log != nil {
		return e.SessionID
	}
	pg, err := events.ReadBack(e.LogPath(), -1, 1, nil)
	if err != nil || len(pg.Events) == 0 {
		return ""
	}
	return pg.Events[0].Event.SessionID
}

func planWord(s StatusReport) string {
	if s.PlanError != "" {
		return "unusable: " + s.PlanError
	}
	if !s.Plan {
		return "none"
	}
	return "ready (" + (time.Duration(s.PlanAgeSec) * time.Second).String() + " old)"
}

// Text renders the report; repository text (paths, file names, the plan
// error) is shown inert.
func (s StatusReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent:   %s (planner claude, executor codex)\n", render.InertLine(s.Active))
	fmt.Fprintf(&b, "project: %s\n", render.InertLine(s.Root))
	fmt.Fprintf(&b, "plan:    %s\n", render.InertLine(planWord(s)))
	fmt.Fprintf(&b, "changed: %s", Count(len(s.ChangedFiles), "file"))
	for i, c := range s.ChangedFiles {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(s.ChangedFiles)-10)
			break
		}
		fmt.Fprintf(&b, "\n  %s", render.InertLine(c))
	}
	b.WriteString("\n")
	if s.LastRun == nil {
		b.WriteString("last run: none recorded\n")
	} else {
		l := s.LastRun
		state := fmt.Sprintf("exit %d", l.ExitCode)
		if l.Cancelled {
			state = "cancelled"
		}
		from := ""
		if l.FromLog {
			from = " (from the log)"
		}
		fmt.Fprintf(&b, "last run: %s /%s, %s in %s at %s%s", render.InertLine(l.Agent), render.InertLine(l.Command), state, l.Duration.Round(time.Millisecond), l.At.UTC().Format("15:04:05Z"), from)
		if l.Reason != "" {
			b.WriteString(": " + render.InertLine(l.Reason))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ReviewReport is the deterministic review.
type ReviewReport struct {
	Changed      []Change   `json:"changed"`
	PlanSteps    []PlanStep `json:"planSteps"`
	NotInPlan    []string   `json:"notInPlan"`
	Deletions    []string   `json:"deletions"`
	LargeDiffs   []string   `json:"largeDiffs"`
	Secrets      []string   `json:"likelySecrets"`
	TestsTouched []string   `json:"testsTouched"`
	Plan         bool       `json:"plan"`
	// PlanError says why plan.md cannot be read when it exists but is
	// not a plan.
	PlanError string `json:"planError,omitempty"`
}

// MarshalJSON writes empty lists as [] rather than null, so that
// `review --json | jq '.changed[]'` works on a clean tree.
func (r ReviewReport) MarshalJSON() ([]byte, error) {
	type plain ReviewReport
	p := plain(r)
	p.Changed = orEmpty(p.Changed)
	p.PlanSteps = make([]PlanStep, len(r.PlanSteps))
	for i, st := range r.PlanSteps {
		st.Files = orEmpty(st.Files)
		p.PlanSteps[i] = st
	}
	for _, l := range []*[]string{&p.NotInPlan, &p.Deletions, &p.LargeDiffs, &p.Secrets, &p.TestsTouched} {
		*l = orEmpty(*l)
	}
	return json.Marshal(p)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// PlanStep is one item of the plan's Steps section, with the changed
// files it names.
type PlanStep struct {
	Text  string   `json:"text"`
	Files []string `json:"changedFiles"`
}

// lazyRE compiles expr on first use: relay-baton's start-up (a hook run
// at every turn of a Claude Code session among them) compiles nothing it
// does not use.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// LargeDiffLines is the per-file changed-line count flagged as very large.
const LargeDiffLines = 400

var secretPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`AKIA[0-9A-Z]{16}`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}`),
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),
		regexp.MustCompile(`\bxox[baprs]-[A-Za-z0-9-]{10,}`),
		regexp.MustCompile(`(?i)(?:api[_-]?key|secret|password|passwd|token)\s*[:=]\s*["'][^"'\s]{8,}["']`),
	}
})

var testPathRE = lazyRE(`(?i)(_test\.go$|\.test\.[jt]sx?$|\.spec\.[jt]sx?$|(^|/)tests?/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)__tests__/)`)

// planSteps extracts the list items of the plan's "Steps" section.
func planSteps(plan string) []string {
	var steps []string
	in := false
	for _, l := range strings.Split(plan, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(t, "#")), "Steps")
			continue
		}
		if !in {
			continue
		}
		if m := regexp.MustCompile(`^(?:\d+[.)]|[-*+])\s+(.*)$`).FindStringSubmatch(t); m != nil {
			steps = append(steps, m[1])
		}
	}
	return steps
}

// Review compares the working tree's changes with plan.md: which steps
// name changed files, changed files no step names, deletions, very large
// diffs, likely secrets in added lines, and tests touched. No model runs.
func (e *Engine) Review(ctx context.Context) (ReviewReport, error) {
	var r ReviewReport
	ch, err := changes(ctx, e.Root)
	if err != nil {
		return r, err
	}
	r.Changed = ch
	plan, err := e.readPlan()
	r.Plan = err == nil
	if err != nil && !errors.Is(err, ErrNoPlan) {
		r.PlanError = err.Error()
	}
	steps := planSteps(plan)
	mentioned := map[string]bool{}
	for _, s := range steps {
		ps := PlanStep{Text: s, Files: []string{}}
		for _, c := range ch {
			if namesPath(s, c.Path) {
				ps.Files = append(ps.Files, c.Path)
				mentioned[c.Path] = true
			}
		}
		r.PlanSteps = append(r.PlanSteps, ps)
	}
	for _, c := range ch {
		if r.Plan && !mentioned[c.Path] && !namesPath(plan, c.Path) {
			r.NotInPlan = append(r.NotInPlan, c.Path)
		}
		if c.IsDeleted() {
			r.Deletions = append(r.Deletions, c.Path)
		}
		if c.Added+c.Deleted >= LargeDiffLines {
			r.LargeDiffs = append(r.LargeDiffs, fmt.Sprintf("%s (+%d -%d)", c.Path, c.Added, c.Deleted))
		}
		if testPathRE().MatchString(c.Path) {
			r.TestsTouched = append(r.TestsTouched, c.Path)
		}
	}
	// Added lines: diffText covers tracked changes and new files.
	file := ""
	for _, l := range strings.Split(diffText(ctx, e.Root), "\n") {
		if strings.HasPrefix(l, "+++ b/") {
			file = strings.TrimPrefix(l, "+++ b/")
			continue
		}
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			r.Secrets = appendSecret(r.Secrets, file, l[1:])
		}
	}
	refs := map[string]string{}
	if e.ReadOnly() {
		// `relay-baton review` reports only.
	} else if err := writeFileAtomic(filepath.Join(e.SessionDir, "review.md"), []byte(r.Text())); err == nil {
		refs["review"] = "review.md"
	}
	e.emit(events.RoleRelayBaton, strings.TrimPrefix(r.summaryLine(), "review: "), refs, events.ReviewMeta{
		ChangedFiles: events.Int(len(r.Changed)), Deletions: events.Int(len(r.Deletions)), LargeDiffs: events.Int(len(r.LargeDiffs)),
		LikelySecrets: events.Int(len(r.Secrets)), TestsTouched: events.Int(len(r.TestsTouched)), NotInPlan: events.Int(len(r.NotInPlan)), Deterministic: true,
	})
	return r, nil
}

// pathTokenRE matches the words of a text that can be paths.
var pathTokenRE = lazyRE(`[\p{L}\p{N}_./\-]+`)

// namesPath reports whether text names the file at path (relative to the
// repository): a word of text is the path, its base name, or a tail of it
// that starts at a folder ("cmd/main.go" names "app/cmd/main.go"). A word
// that merely contains the name does not: "test_greet.py" does not name
// greet.py, nor "src/greet.py" a greet.py at the top.
func namesPath(text, path string) bool {
	path = strings.TrimPrefix(filepath.ToSlash(path), "./")
	for _, w := range pathTokenRE().FindAllString(text, -1) {
		w = strings.TrimPrefix(strings.TrimRight(w, ".-/"), "./")
		if w == "" {
			continue
		}
		if w == path || strings.HasSuffix(path, "/"+w) {
			return true
		}
	}
	return false
}

func appendSecret(list []string, file, line string) []string {
	for _, re := range secretPatterns() {
		if re.MatchString(line) {
			entry := file + ": " + re.String()
			for _, x := range list {
				if x == entry {
					return list
				}
			}
			return append(list, entry)
		}
	}
	return list
}

func (r ReviewReport) summaryLine() string {
	return fmt.Sprintf("review: %s, %d not in plan, %s, %d very large, %s, %s touched",
		Count(len(r.Changed), "changed file"), len(r.NotInPlan), Count(len(r.Deletions), "deletion"), len(r.LargeDiffs), Count(len(r.Secrets), "likely secret"), Count(len(r.TestsTouched), "test"))
}

// Text renders the review; file names and plan text are shown inert.
func (r ReviewReport) Text() string {
	var b strings.Builder
	b.WriteString(r.summaryLine() + "\n")
	if r.PlanError != "" {
		b.WriteString("plan.md unusable: changes are not compared with plan steps: " + render.InertLine(r.PlanError) + "\n")
	} else if !r.Plan {
		b.WriteString("no plan.md: changes are not compared with plan steps\n")
	}
	for i, s := range r.PlanSteps {
		mark := "·"
		if len(s.Files) > 0 {
			mark = "✓"
		}
		fmt.Fprintf(&b, "  %s step %d: %s", mark, i+1, render.InertLine(summary(s.Text, 100)))
		if len(s.Files) > 0 {
			fmt.Fprintf(&b, " [%s]", render.InertLine(strings.Join(s.Files, ", ")))
		}
		b.WriteString("\n")
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "  - %s\n", render.InertLine(it))
		}
	}
	list("changed but not named in the plan", r.NotInPlan)
	list("RISK deletions", r.Deletions)
	list(fmt.Sprintf("RISK very large diffs (>= %d lines)", LargeDiffLines), r.LargeDiffs)
	list("RISK likely secrets in added lines (pattern matched)", r.Secrets)
	if len(r.Changed) > 0 && len(r.TestsTouched) == 0 {
		b.WriteString("no tests touched\n")
	}
	list("tests touched", r.TestsTouched)
	return b.String()
}

// AgentReview asks the reviewer (claude) for a review, previewed.
func (e *Engine) AgentReview(ctx context.Context) error {
	plan, _ := e.readPlan()
	ch, err := changes(ctx, e.Root)
	if err != nil {
		return err
	}
	var files strings.Builder
	for _, c := range ch {
		fmt.Fprintf(&files, "%s %s (+%d -%d)\n", strings.TrimSpace(c.Status), c.Path, c.Added, c.Deleted)
	}
	diff := diffText(ctx, e.Root)
	if lim := Diets[e.Diet].Diff; len(diff) > lim {
		diff = diff[:lim] + "\n… (diff truncated to the diet budget)"
	}
	spec := runSpec{Command: "review", Req: e.request(e.Reviewer, agents.RoleReviewer, prompts.Review(prompts.ReviewInput{Plan: plan, ChangedFiles: files.String(), Diff: diff}))}
	res, err := e.runOnce(ctx, spec)
	if res.Agent == "" {
		return err
	}
	refs := map[string]string{}
	if strings.TrimSpace(res.FinalText) != "" {
		if werr := writeFileAtomic(filepath.Join(e.SessionDir, "review.md"), []byte(res.FinalText+"\n")); werr == nil {
			refs["review"] = "review.md"
		}
	}
	e.emit(events.Role(res.Agent), fmt.Sprintf("by %s: exit %d; %s", res.Agent, res.ExitCode, summary(res.FinalText, 300)), refs,
		events.ReviewMeta{Agent: res.Agent, ExitCode: events.Int(res.ExitCode), Deterministic: false})
	return err
}

// Check is one doctor line.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail, skip
	Detail string `json:"detail"`
}

// DoctorReport is what doctor / /diagnose shows.
type DoctorReport struct {
	Deep   bool    `json:"deep"`
	Checks []Check `json:"checks"`
}

// Failed reports whether any check failed.
func (r DoctorReport) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == "fail" {
			return true
		}
	}
	return false
}

// Text renders the report without colour.
func (r DoctorReport) Text() string { return r.Render(false) }

// statusColors colour doctor's status words.
var statusColors = map[string]color.Attribute{"ok": color.FgGreen, "warn": color.FgYellow, "fail": color.FgRed}

// Render renders the report, its status words coloured when useColor.
func (r DoctorReport) Render(useColor bool) string { return r.RenderWidth(useColor, 0) }

// RenderWidth is Render with each check's detail wrapped between words at
// width columns (render.Wrap), under the detail column; 0 keeps each check
// on one line (a pipe).
func (r DoctorReport) RenderWidth(useColor bool, width int) string {
	var b strings.Builder
	for _, c := range r.Checks {
		st := fmt.Sprintf("%-4s", c.Status)
		name, detail := render.InertLine(c.Name), render.InertLine(c.Detail)
		head := fmt.Sprintf("%s %-22s", st, name)
		line := head + " " + detail + "\n"
		if width > 0 {
			line = render.Wrap(head, detail, len(head)+1, width)
		}
		if a, ok := statusColors[c.Status]; ok && useColor {
			k := color.New(a, color.Bold)
			k.EnableColor()
			line = k.Sprint(st) + strings.TrimPrefix(line, st)
		}
		b.WriteString(line)
	}
	return b.String()
}

// APIKeyVars are the agents' API-key variables, held back from agents
// unless --allow-api-key-env (then each goes to its own agent only).
var APIKeyVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY"}

// ForbiddenArgs are agent arguments that disable the safety rails.
var ForbiddenArgs = []string{"--full-auto", "--dangerously-bypass-approvals-and-sandbox", "bypassPermissions", "--dangerously-skip-permissions"}

// Doctor checks the environment; deep adds agent versions, .ai-session
// health, conversation.jsonl parse errors and forbidden agent arguments.
func (e *Engine) Doctor(ctx context.Context, deep bool) DoctorReport {
	r := DoctorReport{Deep: deep}
	add := func(name, status, detail string) { r.Checks = append(r.Checks, Check{name, status, detail}) }
	if v, err := git(ctx, e.Root, "--version"); err != nil {
		add("git", "fail", err.Error())
	} else if e.Root == "" {
		add("git", "ok", strings.TrimSpace(v))
		add("repository", "skip", "not inside a git repository: repository checks were skipped (.ai-session, conversation.jsonl); run doctor in one, or pass --path")
	} else {
		add("git", "ok", strings.TrimSpace(v)+" · repository "+e.Root)
	}
	for _, name := range []string{agents.Claude, agents.Codex} {
		roles := []agents.Role{agents.RolePlanner, agents.RoleExecutor, agents.RoleReviewer, agents.RoleAsk}
		inv, err := e.runner.Prepare(agents.Request{Agent: name, Role: roles[0], Prompt: "doctor", Dir: e.Root, AllowAPIKeyEnv: e.allow})
		if err != nil {
			add(name, "fail", err.Error())
			continue
		}
		detail := inv.Path
		if deep {
			detail += " · " + agentVersion(ctx, inv.Path)
		}
		add(name, "ok", detail)
		// The login, asked of the CLI offline, with the environment its
		// runs get (API-key variables removed unless passed).
		switch ls := agents.CheckLogin(ctx, name, inv.Path, inv.Env); {
		case !ls.Known:
			add(name+" login", "warn", "login state unknown ("+ls.Detail+"); if its runs say it is not logged in: "+agents.LoginHowTo(name))
		case ls.NoLogin != "":
			add(name+" login", "ok", "no login needed (provider "+ls.NoLogin+")")
		case ls.LoggedIn:
			add(name+" login", "ok", "logged in ("+ls.Method+")")
		default:
			add(name+" login", "fail", "not logged in: "+agents.LoginHowTo(name)+" (once), then run relay-baton doctor again")
		}
		if deep {
			var bad []string
			for _, role := range roles {
				inv, err := e.runner.Prepare(agents.Request{Agent: name, Role: role, Prompt: "doctor", Dir: e.Root})
				if err != nil {
					continue
				}
				for _, a := range inv.Argv {
					for _, f := range ForbiddenArgs {
						if strings.Contains(a, f) {
							bad = append(bad, fmt.Sprintf("%s (%s)", f, role))
						}
					}
				}
			}
			if len(bad) > 0 {
				add(name+" arguments", "fail", "forbidden: "+strings.Join(bad, ", "))
			} else {
				add(name+" arguments", "ok", "no --full-auto or bypass flags in any role's argv")
			}
		}
	}
	var present []string
	for _, k := range APIKeyVars {
		if e.getenv(k) != "" {
			present = append(present, k)
		}
	}
	switch {
	case len(present) == 0:
		add("api keys", "ok", "none set (agents use their CLI login)")
	case e.allow:
		add("api keys", "warn", "PASSED to agents, each its own (--allow-api-key-env, audited): "+strings.Join(present, ", "))
	default:
		add("api keys", "ok", "present, blocked from agents: "+strings.Join(present, ", "))
	}
	if e.Root != "" {
		add(e.configCheck())
		add(e.claudeSettingsCheck())
	}
	if deep && e.Root != "" {
		if fi, err := os.Stat(e.SessionDir); os.IsNotExist(err) && e.ReadOnly() {
			add(".ai-session", "ok", fmt.Sprintf("%s not created yet (the first recorded command creates it)", e.SessionDir))
		} else if err != nil || !fi.IsDir() {
			add(".ai-session", "fail", fmt.Sprintf("%s missing", e.SessionDir))
		} else if err := dirWritable(e.SessionDir, e.ReadOnly()); err != nil {
			add(".ai-session", "fail", "not writable: "+err.Error())
		} else {
			var files []string
			for _, n := range []string{"plan.md", "handoff.md", "review.md", "commands.log", "conversation.jsonl"} {
				if s := fileSize(filepath.Join(e.SessionDir, n)); s > 0 {
					files = append(files, fmt.Sprintf("%s %dB", n, s))
				}
			}
			add(".ai-session", "ok", "writable; "+strings.Join(append([]string{e.SessionDir}, files...), " · "))
			// relay-baton's own documents there: a FIFO, a link or a folder
			// in their place makes the commands that use them refuse.
			for _, n := range []string{"plan.md", "handoff.md", "review.md", "commands.log"} {
				f, err := events.OpenOwned(filepath.Join(e.SessionDir, n))
				if err == nil {
					f.Close()
				} else if !errors.Is(err, fs.ErrNotExist) {
					add(n, "fail", err.Error())
				}
			}
		}
		if f, err := events.OpenOwned(e.LogPath()); errors.Is(err, fs.ErrNotExist) {
			add("conversation.jsonl", "ok", "no events recorded yet")
		} else if err != nil {
			add("conversation.jsonl", "warn", err.Error())
		} else {
			st, err := events.Scan(f, func(events.Event) error { return nil })
			f.Close()
			switch {
			case err != nil:
				add("conversation.jsonl", "fail", err.Error())
			case st.Skipped() > 0:
				add("conversation.jsonl", "warn", fmt.Sprintf("%s, %s to parse (%d malformed, %d too long): readers skip them", Count(st.Events, "event"), Count(st.Skipped(), "line fails|lines fail"), st.Malformed, st.TooLong))
			default:
				add("conversation.jsonl", "ok", fmt.Sprintf("%s, all lines parse", Count(st.Events, "event")))
			}
		}
	}
	kind := "doctor"
	if deep {
		kind = "doctor --deep"
	}
	fails, warns := 0, 0
	for _, c := range r.Checks {
		switch c.Status {
		case "fail":
			fails++
		case "warn":
			warns++
		}
	}
	e.emit(events.RoleRelayBaton, fmt.Sprintf("%s: %s, %d failed, %s", kind, Count(len(r.Checks), "check"), fails, Count(warns, "warning")), nil,
		events.DiagnoseMeta{Deep: deep, Failed: fails, Warnings: warns})
	return r
}

// dirWritable checks that dir is writable: by creating (and removing) a
// file in it, or, when readOnly, with access(2) alone, which writes nothing.
func dirWritable(dir string, readOnly bool) error {
	if readOnly {
		return canWrite(dir)
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

func agentVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "version unknown: " + err.Error()
	}
	return summary(string(out), 80)
}

// Handoff writes handoff.md (backing up the previous one) within the diet
// budget and launches agent `to` with it, previewed.
func (e *Engine) Handoff(ctx context.Context, to string) error {
	if to != agents.Claude && to != agents.Codex {
		return fmt.Errorf("unknown agent %q for /handoff: choose claude or codex", to)
	}
	doc := e.HandoffDoc(ctx, to)
	spec := runSpec{Command: "handoff", Req: e.request(to, agents.RoleExecutor, prompts.Handoff(prompts.HandoffInput{From: e.Active, To: to, Handoff: doc}))}
	// handoff.md is written once the user said yes: a declined handoff
	// leaves the previous one in place.
	_, err := e.runOnceThen(ctx, spec, func() error { return e.writeHandoff(to, doc) })
	return err
}

// writeHandoff writes handoff.md, backing up the previous one, and logs it.
func (e *Engine) writeHandoff(to, doc string) error {
	path := filepath.Join(e.SessionDir, "handoff.md")
	refs := map[string]string{"handoff": "handoff.md"}
	if old, err := readDoc(path); err == nil {
		backup := "handoff." + tsName(e.now()) + ".md"
		if err := conversation.WriteFile(filepath.Join(e.SessionDir, backup), old); err != nil {
			return fmt.Errorf("back up handoff.md: %w (nothing ran)", err)
		}
		refs["backup"] = backup
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("back up handoff.md: %w (nothing ran)", err)
	}
	if err := writeFileAtomic(path, []byte(doc)); err != nil {
		return fmt.Errorf("%w (nothing ran)", err)
	}
	e.Say("wrote .ai-session/handoff.md (%d chars, budget %d for diet %s).", len(doc), Diets[e.Diet].Handoff, e.Diet)
	e.emit(events.RoleRelayBaton, fmt.Sprintf("handoff.md for %s (%d chars, diet %s)", to, len(doc), e.Diet), refs,
		events.HandoffMeta{Agent: to, From: e.Active, Chars: len(doc), Diet: string(e.Diet)})
	return nil
}

// HandoffDoc builds handoff.md with the reference's sections, each part cut
// to its diet budget and the whole to the handoff budget.
func (e *Engine) HandoffDoc(ctx context.Context, to string) string {
	d := Diets[e.Diet]
	cut := func(s string, n int) string {
		if len(s) <= n {
			return strings.TrimRight(s, "\n")
		}
		return strings.TrimRight(s[:n], "\n") + "\n… (truncated to the diet budget)"
	}
	plan, _ := e.readPlan()
	goal := "(no plan.md)"
	if plan != "" {
		goal = sectionOf(plan, "Goal")
	}
	ch, _ := changes(ctx, e.Root)
	var files strings.Builder
	for _, c := range ch {
		fmt.Fprintf(&files, "- %s %s (+%d -%d)\n", strings.TrimSpace(c.Status), c.Path, c.Added, c.Deleted)
	}
	last := "none in this session"
	if e.last != nil {
		last = fmt.Sprintf("%s /%s: exit %d in %s", e.last.Agent, e.last.Command, e.last.ExitCode, e.last.Duration.Round(time.Millisecond))
	}
	tail, tailErr := readTail(filepath.Join(e.SessionDir, "commands.log"), d.LogTail)
	if tailErr != nil && !errors.Is(tailErr, fs.ErrNotExist) {
		tail = "error: commands.log not read: " + tailErr.Error() + "\n" // listed under Known Errors
	}
	known := grepLines(tail, regexp.MustCompile(`(?i)\b(error|fail|panic)`), 20)
	tests := grepLines(tail, regexp.MustCompile(`(?i)(^|\s)(ok|FAIL|PASS|passed|failed)\b`), 20)
	budget := e.Budget(ctx)
	var s strings.Builder
	sec := func(title, body string) {
		if strings.TrimSpace(body) == "" {
			body = "(none)"
		}
		fmt.Fprintf(&s, "## %s\n%s\n\n", title, strings.TrimRight(body, "\n"))
	}
	s.WriteString("# Handoff\n\n")
	sec("Goal", goal)
	sec("Previous Agent", e.Active)
	sec("Next Agent", to)
	sec("Fallback Reason", "Handoff requested by the user with /handoff.")
	sec("Token Diet Summary", fmt.Sprintf("diet %s; context %d chars (~%d tokens), ratio %.2f of the %d-char handoff budget", e.Diet, budget.Total, budget.Tokens, budget.Ratio, d.Handoff))
	sec("Current Repository State", fmt.Sprintf("HEAD %s; %s; last run: %s", short(head(ctx, e.Root)), Count(len(ch), "changed file"), last))
	sec("Repo Map", cut(repoMap(ctx, e.Root), d.RepoMap))
	sec("Relevant Files", cut(relevantFiles(plan, ch), d.RepoMap/2))
	sec("Changed Files", files.String())
	sec("Progress Summary", cut(plan, d.Plan/2))
	sec("Important Diff", "```diff\n"+cut(diffText(ctx, e.Root), d.Diff)+"\n```")
	sec("Known Errors", known)
	sec("Test Results", tests)
	sec("Next Steps", sectionOf(plan, "Next step"))
	sec("Instructions for Next Agent", "Continue the plan from where it stands; keep changes minimal; run the plan's Verification. Do not commit, push or open a pull request.")
	return cut(s.String(), d.Handoff) + "\n"
}

func sectionOf(md, title string) string {
	var out []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			if in {
				break
			}
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(t, "#")), title)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func grepLines(s string, re *regexp.Regexp, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			out = append(out, summary(l, 200))
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

func relevantFiles(plan string, ch []Change) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range ch {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, "- "+c.Path)
		}
	}
	for _, m := range regexp.MustCompile("`([^`\\s]+\\.[A-Za-z0-9]+)`").FindAllStringSubmatch(plan, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, "- "+m[1])
		}
	}
	return strings.Join(out, "\n")
}

// readTail returns the last n bytes of path, one of the room's own files
// (commands.log can grow large): no FIFO blocks it, no symlink is followed.
func readTail(path string, n int) (string, error) {
	f, err := events.OpenOwned(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	off := max(fi.Size()-int64(n), 0)
	b := make([]byte, fi.Size()-off)
	k, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return string(b[:k]), nil
}

// claudeSettingsCheck is doctor's line about the folder's Claude Code
// project settings (.claude/settings.json, .mcp.json): loaded in claude
// runs only where Claude Code itself trusts the folder, as the preview says.
func (e *Engine) claudeSettingsCheck() (name, status, detail string) {
	var env []string
	for _, k := range []string{"HOME", "USERPROFILE", "CLAUDE_CONFIG_DIR"} {
		env = append(env, k+"="+e.getenv(k))
	}
	ct := agents.CheckClaudeTrust(e.Root, env)
	if ct.Unreadable {
		return "project settings", "warn", agents.ClaudeSettingsLine(ct) + "; " + ct.Why
	}
	return "project settings", "ok", agents.ClaudeSettingsLine(ct)
}

// configCheck is doctor's line about the repository's .relay-baton.json:
// absent, trusted (with what it adds), ignored (not trusted or changed), or
// refused.
func (e *Engine) configCheck() (name, status, detail string) {
	name = agents.ConfigName
	st, _, err := agents.CheckTrust(e.Root)
	switch {
	case err != nil:
		return name, "fail", err.Error()
	case !st.Exists:
		return name, "ok", "none (agents run with relay-baton's arguments only)"
	case st.Changed:
		return name, "warn", "ignored: changed since you trusted it (review it, then run relay-baton trust)"
	case !st.Trusted:
		return name, "warn", "ignored: not trusted (review it, then run relay-baton trust to use it)"
	}
	cfg, err := agents.LoadConfig(e.Root)
	if err != nil {
		return name, "fail", err.Error()
	}
	var parts []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		if args := cfg.Args(a); len(args) > 0 {
			parts = append(parts, a+" "+strings.Join(args, " "))
		}
	}
	if len(cfg.AllowEnv) > 0 {
		parts = append(parts, "allowEnv "+strings.Join(cfg.AllowEnv, ", "))
	}
	if len(parts) == 0 {
		return name, "ok", "trusted; adds no argument"
	}
	return name, "ok", "trusted; adds " + strings.Join(parts, " · ")
}
