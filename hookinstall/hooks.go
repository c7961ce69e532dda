package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tailscale/hujson"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/hook"
	"github.com/relay-baton/relay-baton/safeio"
)

// HookOptions says what to register.
type HookOptions struct {
	Binary      string        // absolute path of relay-baton
	WaitTimeout time.Duration // the waiter's hook timeout (0 = hook.DefaultWaitTimeout)
	Agent       string        // "" or conversation.AgentClaude: Claude Code's hooks; conversation.AgentCodex: Codex's (codex_hooks.go)
	// ExecForm writes Claude Code's hooks in exec form: "command" the
	// binary and "args" its arguments, run without a shell (Claude Code
	// 2.1.139 and later). Without it, "command" is one shell line that
	// Claude Code runs with sh -c. Codex's hooks are always shell lines.
	ExecForm bool
}

// HookEntry is one hook relay-baton registers.
type HookEntry struct {
	Event       string // Stop, SessionStart, UserPromptSubmit, Notification
	Command     string // a shell line, or (with Args) the binary
	Args        []string
	Timeout     int // seconds
	AsyncRewake bool
}

// Line is the entry as one shell line, for messages: Command, or in exec
// form the binary and its arguments quoted as a shell would need them.
func (h HookEntry) Line() string {
	if h.Args == nil {
		return h.Command
	}
	w := []string{ShellQuote(h.Command)}
	for _, a := range h.Args {
		w = append(w, ShellQuote(a))
	}
	return strings.Join(w, " ")
}

// hookSubs are the relay-baton hook subcommands (what marks an entry ours).
var hookSubs = []string{"stop", "wait", "session-start", "prompt-submit", "notify"}

// Hooks returns the entries `relay-baton hook install` registers.
func Hooks(o HookOptions) []HookEntry {
	if o.Agent == conversation.AgentCodex {
		return codexHooks(o)
	}
	wt := o.WaitTimeout
	if wt <= 0 {
		wt = hook.DefaultWaitTimeout
	}
	wait := HookCommand(o.Binary, "wait")
	if wt != hook.DefaultWaitTimeout {
		wait += " --timeout " + (wt - hook.WaiterMargin(wt)).String()
	}
	secs := int((wt + time.Second - 1) / time.Second)
	out := []HookEntry{
		{Event: "Stop", Command: HookCommand(o.Binary, "stop"), Timeout: 30},
		{Event: "Stop", Command: wait, Timeout: secs, AsyncRewake: true},
		{Event: "SessionStart", Command: HookCommand(o.Binary, "session-start"), Timeout: 30},
		{Event: "SessionStart", Command: wait, Timeout: secs, AsyncRewake: true},
		{Event: "UserPromptSubmit", Command: HookCommand(o.Binary, "prompt-submit"), Timeout: 30},
		{Event: "Notification", Command: HookCommand(o.Binary, "notify"), Timeout: 30},
	}
	if o.ExecForm {
		// The same words, without a shell: the binary's path as it is
		// (no quoting), each argument its own element.
		for i, h := range out {
			_, rest, _ := cutShellWord(h.Command)
			out[i].Command, out[i].Args = o.Binary, strings.Fields(rest)
		}
	}
	return out
}

// HookCommand is the command line of a hook: the binary (shell-quoted when
// needed) followed by "hook <sub>".
func HookCommand(binary, sub string) string {
	return ShellQuote(binary) + " hook " + sub
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isOursExec reports whether an exec-form hook (command, args) is exactly
// one relay-baton registered: a relay-baton binary with the arguments
// "hook <sub>" and "--flag value" pairs of plain words, as isOurs.
func isOursExec(command string, args []string) bool {
	if command == "" || !filepath.IsAbs(command) || strings.ContainsAny(command, "\x00\n") {
		return false
	}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'") {
			return false
		}
	}
	return isOurs(ShellQuote(command) + " " + strings.Join(args, " "))
}

// handlerLine reads one hook handler of a settings file: its command as
// one shell line (exec form's command and args joined as Line does), and
// whether it is exactly relay-baton's own. ok is false when it has no
// string command.
func handlerLine(hobj *hujson.Object) (line string, ours, ok bool) {
	cv := jmember(hobj, "command")
	if cv == nil {
		return "", false, false
	}
	lit, isLit := cv.Value.(hujson.Literal)
	if !isLit || lit.Kind() != '"' {
		return "", false, false
	}
	av := jmember(hobj, "args")
	if av == nil {
		return lit.String(), isOurs(lit.String()), true
	}
	arr, isArr := av.Value.(*hujson.Array)
	if !isArr {
		return lit.String(), false, true
	}
	args := []string{}
	for _, e := range arr.Elements {
		a, isStr := e.Value.(hujson.Literal)
		if !isStr || a.Kind() != '"' {
			return lit.String(), false, true
		}
		args = append(args, a.String())
	}
	h := HookEntry{Command: lit.String(), Args: args}
	return h.Line(), isOursExec(lit.String(), args), true
}

// isOurs reports whether a hook command is exactly one relay-baton
// registered: "<path to a relay-baton binary> hook <sub>" followed only by
// "--flag value" pairs of plain words. A command that does more (a cd
// before, a redirection after, a wrapper program) is the user's own and is
// never removed or replaced.
func isOurs(cmd string) bool {
	bin, rest, ok := cutShellWord(cmd)
	if !ok || !ourName(bin) {
		return false
	}
	f := strings.Split(rest, " ")
	if len(f) < 3 || f[0] != "" || f[1] != "hook" || !slices.Contains(hookSubs, f[2]) {
		return false
	}
	flags := f[3:]
	if len(flags)%2 != 0 {
		return false
	}
	for i := 0; i < len(flags); i += 2 {
		if !flagName().MatchString(flags[i]) || !plainWord().MatchString(flags[i+1]) {
			return false
		}
	}
	return true
}

// flagName and plainWord are compiled on first use (hook install), not
// when the binary starts: every hook run starts this binary.
var (
	flagName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^--[a-z][a-z-]*$`) })
	plainWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:/+-]+$`) })
)

// cutShellWord splits cmd into its first word as ShellQuote writes one (a
// plain word, or '...' with '\” for a quote) and the rest.
func cutShellWord(cmd string) (word, rest string, ok bool) {
	if !strings.HasPrefix(cmd, "'") {
		i := strings.IndexByte(cmd, ' ')
		if i <= 0 {
			return "", "", false
		}
		w := cmd[:i]
		if ShellQuote(w) != w {
			return "", "", false
		}
		return w, cmd[i:], true
	}
	var b strings.Builder
	s := cmd[1:]
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return "", "", false
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		if strings.HasPrefix(s, `\''`) {
			b.WriteByte('\'')
			s = s[3:]
			continue
		}
		return b.String(), s, true
	}
}

// callsOurHook reports whether cmd runs some relay-baton's "hook <sub>".
func callsOurHook(cmd string) bool {
	for _, sub := range hookSubs {
		if strings.Contains(cmd, "relay-baton") && strings.Contains(cmd, " hook "+sub) {
			return true
		}
	}
	return false
}

// HookPlan is the outcome of a settings merge.
type HookPlan struct {
	Path    string
	Target  string // the file written: Path, or the file a symlink at Path names
	Before  []byte // nil when the file did not exist
	After   []byte
	Changed bool
}

// MergeHooks returns settings (the JSON text of a Claude Code settings
// file or a Codex hooks.json, empty for none) with relay-baton's own
// entries (exactly "<a relay-baton binary> hook <sub> [--flag value]", any
// binary path) replaced by the ones for o (uninstall=true: removed). The
// file is edited in place (jsonedit.go): everything else in it, other
// hooks, unknown keys, numbers, key order and formatting included, is kept
// byte for byte; running it twice changes nothing.
func MergeHooks(settings []byte, o HookOptions, uninstall bool) ([]byte, error) {
	doc, err := parseJSONDoc(settings)
	if err != nil {
		return nil, err
	}
	root := doc.root.Value.(*hujson.Object)
	hooksV := jmember(root, "hooks")
	var hooks *hujson.Object
	if hooksV != nil {
		if hooks, _ = hooksV.Value.(*hujson.Object); hooks == nil {
			return nil, errors.New(`settings "hooks" is not an object: fix it by hand, then retry`)
		}
		had := len(hooks.Members)
		removeOurHooks(hooks)
		if had > 0 && len(hooks.Members) == 0 && uninstall {
			removeMember(root, "hooks") // it held only ours
		}
	}
	if uninstall {
		return doc.bytes()
	}
	// Our entries, grouped by event in the order of Hooks.
	var events []string
	groups := map[string][][]byte{}
	for _, h := range Hooks(o) {
		g, err := json.Marshal(hookGroup{Hooks: []hookHandler{{Type: "command", Command: h.Command, Args: h.Args, Timeout: h.Timeout, AsyncRewake: h.AsyncRewake}}})
		if err != nil {
			return nil, err
		}
		if _, ok := groups[h.Event]; !ok {
			events = append(events, h.Event)
		}
		groups[h.Event] = append(groups[h.Event], g)
	}
	if hooks == nil {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, ev := range events {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(ev)
			b.Write(name)
			b.WriteString(":[")
			b.Write(bytes.Join(groups[ev], []byte(",")))
			b.WriteByte(']')
		}
		b.WriteByte('}')
		if err := doc.appendMember(root, "hooks", b.Bytes(), ""); err != nil {
			return nil, err
		}
		return doc.bytes()
	}
	hooksIndent := doc.lineIndent(memberOffset(root, "hooks"))
	for _, ev := range events {
		if v := jmember(hooks, ev); v != nil {
			if arr, ok := v.Value.(*hujson.Array); ok {
				evIndent := doc.lineIndent(memberOffset(hooks, ev))
				if memberOffset(hooks, ev) < 0 {
					evIndent = hooksIndent + doc.unit
				}
				for _, g := range groups[ev] {
					if err := doc.appendElement(arr, g, evIndent); err != nil {
						return nil, err
					}
				}
				continue
			}
			return nil, fmt.Errorf("settings \"hooks\".%s is not a list: fix it by hand, then retry", ev)
		}
		if err := doc.appendMember(hooks, ev, append(append([]byte("["), bytes.Join(groups[ev], []byte(","))...), ']'), hooksIndent); err != nil {
			return nil, err
		}
	}
	return doc.bytes()
}

// hookGroup and hookHandler are one entry as relay-baton writes it, keys in
// this order.
type hookGroup struct {
	Hooks []hookHandler `json:"hooks"`
}

type hookHandler struct {
	Type        string   `json:"type"`
	Command     string   `json:"command"`
	Args        []string `json:"args,omitempty"`
	Timeout     int      `json:"timeout"`
	AsyncRewake bool     `json:"asyncRewake,omitempty"`
}

// memberOffset is where obj's member name starts in the parsed file, or -1
// (a member added since).
func memberOffset(obj *hujson.Object, name string) int {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			if obj.Members[i].Name.StartOffset == 0 && obj.Members[i].Name.EndOffset == 0 {
				return -1
			}
			return obj.Members[i].Name.StartOffset
		}
	}
	return -1
}

// removeOurHooks removes relay-baton's own handlers from every event of
// hooks, then the groups and events they leave empty. A group or an event
// that held nothing before stays.
func removeOurHooks(hooks *hujson.Object) {
	var emptied []string
	for i := range hooks.Members {
		arr, ok := hooks.Members[i].Value.Value.(*hujson.Array)
		if !ok || len(arr.Elements) == 0 {
			continue
		}
		removeElements(arr, func(g *hujson.Value) bool {
			gobj, ok := g.Value.(*hujson.Object)
			if !ok {
				return true
			}
			lv := jmember(gobj, "hooks")
			if lv == nil {
				return true
			}
			list, ok := lv.Value.(*hujson.Array)
			if !ok || len(list.Elements) == 0 {
				return true
			}
			removeElements(list, func(h *hujson.Value) bool {
				hobj, ok := h.Value.(*hujson.Object)
				if !ok {
					return true
				}
				_, ours, _ := handlerLine(hobj)
				return !ours
			})
			return len(list.Elements) > 0 // a group that held only ours goes
		})
		if len(arr.Elements) == 0 {
			lit, _ := hooks.Members[i].Name.Value.(hujson.Literal)
			emptied = append(emptied, lit.String())
		}
	}
	for _, ev := range emptied {
		removeMember(hooks, ev)
	}
}

// eachHandler calls fn with the command line of each hook handler of
// settings (shell or exec form) and whether it is exactly one of
// relay-baton's own entries; settings that do not parse have none.
func eachHandler(settings []byte, fn func(line string, ours bool)) {
	doc, err := parseJSONDoc(settings)
	if err != nil {
		return
	}
	for v := range doc.root.All() {
		if obj, ok := v.Value.(*hujson.Object); ok {
			if c, ours, ok := handlerLine(obj); ok {
				fn(c, ours)
			}
		}
	}
}

// ForeignRelayBatonHooks lists the hook commands of settings that call
// relay-baton's hooks but are not exactly relay-baton's own entries (a
// user's wrapper): install and uninstall leave them as they are.
func ForeignRelayBatonHooks(settings []byte) []string {
	var out []string
	eachHandler(settings, func(c string, ours bool) {
		if !ours && callsOurHook(c) {
			out = append(out, c)
		}
	})
	return out
}

// StopHookBinaries are the relay-baton binaries whose own Stop hook
// ("<binary> hook stop", in shell or exec form) settings holds.
func StopHookBinaries(settings []byte) []string {
	var out []string
	eachHandler(settings, func(c string, ours bool) {
		if !ours {
			return
		}
		bin, rest, _ := cutShellWord(c)
		if strings.HasPrefix(rest, " hook stop") && !slices.Contains(out, bin) {
			out = append(out, bin)
		}
	})
	return out
}

// PlanHooks reads path and computes the merge without writing.
func PlanHooks(path string, o HookOptions, uninstall bool) (HookPlan, error) {
	return planHooksIn(path, "", o, uninstall)
}

// planHooksIn is PlanHooks for a file that must stay inside the folder
// within (a repository's own settings): a symlink at path, or at one of its
// folders, that leads out of it is refused, never written through. A
// symlink at path that stays inside (or any, when within is "") is kept:
// its target is what gets edited.
func planHooksIn(path, within string, o HookOptions, uninstall bool) (HookPlan, error) {
	target, err := settingsTarget(path, within)
	if err != nil {
		return HookPlan{}, err
	}
	before, err := safeio.ReadRegular(target, 16<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return HookPlan{}, err
	}
	if errors.Is(err, fs.ErrNotExist) {
		before = nil
	}
	after, err := MergeHooks(before, o, uninstall)
	if err != nil {
		return HookPlan{}, fmt.Errorf("%s: %w", path, err)
	}
	p := HookPlan{Path: path, Target: target, Before: before, After: after}
	p.Changed = !jsonEqual(before, after)
	if uninstall && before == nil {
		p.Changed = false
	}
	return p, nil
}

// settingsTarget returns the file to edit for path: path itself, or the
// file a symlink at path names (a dotfiles setup keeps the link). With
// within set, the file must resolve inside within.
func settingsTarget(path, within string) (string, error) {
	target := path
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		r, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", fmt.Errorf("%s is a symlink whose target cannot be read (%w): fix or remove the link, then retry", path, err)
		}
		target = r
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if within == "" {
		return target, nil
	}
	root, err := filepath.EvalSymlinks(within)
	if err != nil {
		return "", err
	}
	// The folders too: a linked .claude or .codex is not followed.
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if errors.Is(err, fs.ErrNotExist) {
		dir, err = resolveExisting(filepath.Dir(target))
	}
	if err != nil {
		return "", err
	}
	resolved := filepath.Join(dir, filepath.Base(target))
	if rel, err := filepath.Rel(root, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leads outside the repository (to %s) through a symlink: relay-baton does not write through it. Remove the link (or use --scope user for your own settings), then retry", path, resolved)
	}
	return resolved, nil
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// p and joins the rest.
func resolveExisting(p string) (string, error) {
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// BackupPath is where Apply keeps the file as it was before the edit ("" when
// there was no file).
func (p HookPlan) BackupPath() string {
	if p.Before == nil {
		return ""
	}
	return p.target() + ".relay-baton.bak"
}

func (p HookPlan) target() string {
	if p.Target != "" {
		return p.Target
	}
	return p.Path
}

// Apply writes the plan: first a backup of the file as it was (BackupPath),
// then the edited file (temp file + rename, keeping the file's mode). A
// symlink at Path stays a symlink: its target is what is written.
func (p HookPlan) Apply() error {
	if !p.Changed {
		return nil
	}
	target := p.target()
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	if b := p.BackupPath(); b != "" {
		if err := safeio.WriteFileAtomic(b, p.Before, mode, true); err != nil {
			return fmt.Errorf("back up %s before editing it: %w (nothing was changed)", target, err)
		}
	}
	if err := safeio.WriteFileAtomic(target, p.After, mode, true); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	return nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	ab, _ := json.Marshal(x)
	bb, _ := json.Marshal(y)
	return bytes.Equal(ab, bb)
}
