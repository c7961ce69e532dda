package room

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/diet"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/prompts"
	"github.com/relay-baton/relay-baton/safeio"
)

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
	path := filepath.Join(e.SessionDir, events.HandoffFile)
	refs := map[string]string{events.RefHandoff: events.HandoffFile}
	if old, err := readDoc(path); err == nil {
		backup := "handoff." + tsName(e.now()) + ".md"
		if err := safeio.WriteFile(filepath.Join(e.SessionDir, backup), old); err != nil {
			return fmt.Errorf("back up handoff.md: %w (nothing ran)", err)
		}
		refs[events.RefBackup] = backup
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("back up handoff.md: %w (nothing ran)", err)
	}
	if err := writeFileAtomic(path, []byte(doc)); err != nil {
		return fmt.Errorf("%w (nothing ran)", err)
	}
	e.Say("wrote .ai-session/handoff.md (%d chars, budget %d for diet %s).", len(doc), diet.Profiles[e.Diet].Handoff, e.Diet)
	e.emit(events.RoleRelayBaton, fmt.Sprintf("handoff.md for %s (%d chars, diet %s)", to, len(doc), e.Diet), refs,
		events.HandoffMeta{Agent: to, From: e.Active, Chars: len(doc), Diet: string(e.Diet)})
	return nil
}

// HandoffDoc builds handoff.md with its fixed sections (Goal to
// Instructions for Next Agent), each part cut to its diet budget and the
// whole to the handoff budget.
func (e *Engine) HandoffDoc(ctx context.Context, to string) string {
	d := diet.Profiles[e.Diet]
	cut := func(s string, n int) string {
		if len(s) <= n {
			return strings.TrimRight(s, "\n")
		}
		return strings.TrimRight(s[:n], "\n") + "\n… (truncated to the diet budget)"
	}
	plan, _ := e.planMD.read()
	goal := "(no plan.md)"
	if plan != "" {
		goal = sectionOf(plan, "Goal")
	}
	ch, _ := gitrepo.Changes(ctx, e.wt.WorkDir())
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
	sec("Current Repository State", fmt.Sprintf("HEAD %s; %s; last run: %s", short(gitrepo.Head(ctx, e.wt.WorkDir())), render.Count(len(ch), "changed file"), last))
	sec("Repo Map", cut(gitrepo.Map(ctx, e.wt.WorkDir()), d.RepoMap))
	sec("Relevant Files", cut(relevantFiles(plan, ch), d.RepoMap/2))
	sec("Changed Files", files.String())
	sec("Progress Summary", cut(plan, d.Plan/2))
	sec("Important Diff", "```diff\n"+cut(gitrepo.Diff(ctx, e.wt.WorkDir()), d.Diff)+"\n```")
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

func relevantFiles(plan string, ch []gitrepo.Change) string {
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
	f, err := safeio.OpenOwned(path)
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
