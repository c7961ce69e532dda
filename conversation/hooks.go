package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultWaitTimeout is the hook timeout registered for the asyncRewake
// waiter: Claude Code kills a hook at its timeout and re-arms it only at the
// next Stop, so an idle session is reachable for this long after each turn.
// Note: `claude -p --input-format stream-json` waits for a running waiter
// before it exits once its stdin closes (measured with 2.1.328): such
// sessions should be installed with a shorter --wait-timeout, or killed.
const DefaultWaitTimeout = 24 * time.Hour

// WaiterMargin is how long before its hook timeout the waiter gives up on
// its own (exit 0, nothing claimed), so it is never killed mid-claim.
func WaiterMargin(hookTimeout time.Duration) time.Duration {
	return min(time.Minute, hookTimeout/10)
}

// HookOptions says what to register.
type HookOptions struct {
	Binary      string        // absolute path of relay-baton
	WaitTimeout time.Duration // the waiter's hook timeout (0 = DefaultWaitTimeout)
	Agent       string        // "" or AgentClaude: Claude Code's hooks; AgentCodex: Codex's (codex_hooks.go)
}

// HookEntry is one hook relay-baton registers.
type HookEntry struct {
	Event       string // Stop, SessionStart, UserPromptSubmit, Notification
	Command     string
	Timeout     int // seconds
	AsyncRewake bool
}

// hookSubs are the relay-baton hook subcommands (what marks an entry ours).
var hookSubs = []string{"stop", "wait", "session-start", "prompt-submit", "notify"}

// Hooks returns the entries `relay-baton hook install` registers.
func Hooks(o HookOptions) []HookEntry {
	if o.Agent == AgentCodex {
		return codexHooks(o)
	}
	wt := o.WaitTimeout
	if wt <= 0 {
		wt = DefaultWaitTimeout
	}
	wait := HookCommand(o.Binary, "wait")
	if wt != DefaultWaitTimeout {
		wait += " --timeout " + (wt - WaiterMargin(wt)).String()
	}
	secs := int((wt + time.Second - 1) / time.Second)
	return []HookEntry{
		{Event: "Stop", Command: HookCommand(o.Binary, "stop"), Timeout: 30},
		{Event: "Stop", Command: wait, Timeout: secs, AsyncRewake: true},
		{Event: "SessionStart", Command: HookCommand(o.Binary, "session-start"), Timeout: 30},
		{Event: "SessionStart", Command: wait, Timeout: secs, AsyncRewake: true},
		{Event: "UserPromptSubmit", Command: HookCommand(o.Binary, "prompt-submit"), Timeout: 30},
		{Event: "Notification", Command: HookCommand(o.Binary, "notify"), Timeout: 30},
	}
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

// isOurs reports whether a hook command is one relay-baton registered:
// "<path to a relay-baton binary> hook <sub> [flags]".
func isOurs(cmd string) bool {
	f := strings.Fields(cmd)
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "hook" && slices.Contains(hookSubs, f[i+1]) {
			bin := strings.Trim(strings.Join(f[:i], " "), "'\"")
			return strings.HasPrefix(filepath.Base(bin), "relay-baton")
		}
	}
	return false
}

// HookPlan is the outcome of a settings merge.
type HookPlan struct {
	Path    string
	Before  []byte // nil when the file did not exist
	After   []byte
	Changed bool
}

// MergeHooks returns settings (the JSON text of a Claude Code settings
// file, empty for none) with relay-baton's entries (any binary path)
// replaced by the ones for o (uninstall=true: removed). Other hooks and unknown keys
// are kept; running it twice changes nothing.
func MergeHooks(settings []byte, o HookOptions, uninstall bool) ([]byte, error) {
	root := map[string]any{}
	if len(bytes.TrimSpace(settings)) > 0 {
		if err := json.Unmarshal(settings, &root); err != nil {
			return nil, fmt.Errorf("settings file is not valid JSON (fix or move it, then retry): %w", err)
		}
		if root == nil {
			root = map[string]any{}
		}
	}
	hooks, _ := root["hooks"].(map[string]any)
	if root["hooks"] != nil && hooks == nil {
		return nil, errors.New(`settings "hooks" is not an object: fix it by hand, then retry`)
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	// Remove our entries everywhere.
	for ev, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			if !ok {
				keep = append(keep, g)
				continue
			}
			list, ok := gm["hooks"].([]any)
			if !ok {
				keep = append(keep, g)
				continue
			}
			var rest []any
			for _, h := range list {
				hm, ok := h.(map[string]any)
				if cmd, _ := hm["command"].(string); ok && isOurs(cmd) {
					continue
				}
				rest = append(rest, h)
			}
			if len(rest) == 0 && len(list) > 0 {
				continue // the group held only our hooks
			}
			gm["hooks"] = rest
			keep = append(keep, gm)
		}
		if len(keep) == 0 {
			delete(hooks, ev)
		} else {
			hooks[ev] = keep
		}
	}
	if !uninstall {
		for _, h := range Hooks(o) {
			entry := map[string]any{"type": "command", "command": h.Command, "timeout": h.Timeout}
			if h.AsyncRewake {
				entry["asyncRewake"] = true
			}
			groups, _ := hooks[h.Event].([]any)
			hooks[h.Event] = append(groups, map[string]any{"hooks": []any{entry}})
		}
	}
	if len(hooks) == 0 {
		delete(root, "hooks")
	} else {
		root["hooks"] = hooks
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SettingsPath returns the settings file of a scope: project
// (<workspace>/.claude/settings.json), local (settings.local.json) or user
// ($CLAUDE_CONFIG_DIR or ~/.claude, settings.json).
func SettingsPath(scope, workspace string) (string, error) {
	switch scope {
	case "project", "":
		return filepath.Join(workspace, ".claude", "settings.json"), nil
	case "local":
		return filepath.Join(workspace, ".claude", "settings.local.json"), nil
	case "user":
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return filepath.Join(d, "settings.json"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("scope must be project, local or user, not %q", scope)
}

// PlanHooks reads path and computes the merge without writing.
func PlanHooks(path string, o HookOptions, uninstall bool) (HookPlan, error) {
	before, err := readRegularFile(path, 16<<20)
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
	p := HookPlan{Path: path, Before: before, After: after}
	p.Changed = !jsonEqual(before, after)
	if uninstall && before == nil {
		p.Changed = false
	}
	return p, nil
}

// Apply writes the plan (temp file + rename, keeping the file's mode).
func (p HookPlan) Apply() error {
	if !p.Changed {
		return nil
	}
	dir := filepath.Dir(p.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := WriteFileAtomic(p.Path, p.After, mode, true); err != nil {
		return fmt.Errorf("write %s: %w", p.Path, err)
	}
	return nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ab, _ := json.Marshal(x)
	bb, _ := json.Marshal(y)
	return bytes.Equal(ab, bb)
}

// hookEvents are the hook_event_name values each hook subcommand serves.
var hookEvents = map[string][]string{
	"stop":          {"Stop"},
	"wait":          {"Stop", "SessionStart"},
	"prompt-submit": {"UserPromptSubmit"},
	"session-start": {"SessionStart"},
	"notify":        {"Notification"},
}

// CheckHookEvent reports whether a payload's hook_event_name is one the hook
// subcommand sub serves: `hook stop` given a UserPromptSubmit payload (a
// hook registered under the wrong event, or a hand-made payload) must not
// claim a message. A payload without hook_event_name is refused too:
// Claude Code and Codex always send it.
func CheckHookEvent(sub, event string) error {
	want, ok := hookEvents[sub]
	if !ok {
		return fmt.Errorf("unknown hook %q", sub)
	}
	if slices.Contains(want, event) {
		return nil
	}
	got := fmt.Sprintf("event %q", oneLineCut(event, 40))
	if event == "" {
		got = "no hook_event_name"
	}
	return fmt.Errorf("hook %s: payload has %s, not %s: ignored, nothing claimed (is the hook registered under another event? `relay-baton hook install` rewrites the entries)", sub, got, strings.Join(want, " or "))
}

// HookBudget is how long the Stop, UserPromptSubmit and SessionStart hooks
// may work: well under the 30 s timeout they are registered with, so that
// Claude Code never has to kill one (a claim cut short is recovered by the
// next lane). RELAY_BATON_HOOK_BUDGET overrides it (tests).
func HookBudget() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RELAY_BATON_HOOK_BUDGET")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}

// RunBounded runs fn in a goroutine and waits for it: for at most limit
// (0: no limit) and, once ctx ends (a signal), for at most grace more. It
// reports whether fn finished; when it did not, the caller returns and the
// process exits with fn cut short.
func RunBounded(ctx context.Context, limit, grace time.Duration, fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	var expire <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-done:
		return true
	case <-expire:
		return false
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
