// Package hookinstall puts relay-baton's chat hooks into an agent's
// configuration and takes them out again: Claude Code's settings files
// (project, local or user) and Codex's hooks.json with the trust Codex
// asks of each hook (recorded through `codex app-server`). The settings
// are edited in place (jsonedit.go), so everything else in them is kept
// byte for byte; CheckHooks is doctor's read-only look at them. What runs
// when a hook fires is package conversation/hook's (hook.Run).
package hookinstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/reports"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/workspace"
)

// Options says what `relay-baton hook install` does.
type Options struct {
	Agent       string // conversation.AgentClaude (Claude Code's settings, the default) or conversation.AgentCodex (hooks.json and Codex's trust)
	Workspace   string
	Scope       string        // project, local or user (Codex: user or project); "" is the agent's default, project for Claude Code, user for Codex
	Binary      string        // the relay-baton binary (symlinks are resolved); "" is this process's
	WaitTimeout time.Duration // at least 10 s
	Check       bool          // only report whether the hooks are installed and current
	Uninstall   bool
	// Form of Claude Code's hooks: FormExec, FormShell, or FormAuto (exec
	// form when the installed claude runs it, ClaudeExecForm). "" is
	// FormShell. Codex's hooks are shell lines whatever it says.
	Form string
	// Env is the environment FormAuto looks for claude in (PATH,
	// RELAY_BATON_CLAUDE); nil is this process's.
	Env []string
}

// The forms of Claude Code's hooks (Options.Form).
const (
	FormAuto  = "auto"
	FormExec  = "exec"
	FormShell = "shell"
)

// UsageError is an install refused for its arguments (a bad scope,
// a temporary `go run` binary): Hint says what to run instead.
type UsageError struct{ Msg, Hint string }

func (e *UsageError) Error() string { return e.Msg }

// Install merges relay-baton's hooks into (or, with Uninstall, out of)
// the settings file of o.Scope and writes what it did to out. current is
// false when the hooks are missing or out of date (Check), or, for Codex,
// not trusted by it (said on out).
func Install(ctx context.Context, out io.Writer, o Options) (current bool, err error) {
	switch {
	case o.Check && o.Uninstall:
		return false, &UsageError{Msg: "--check and --uninstall do not go together"}
	case o.WaitTimeout < 10*time.Second:
		return false, &UsageError{Msg: "--wait-timeout must be at least 10s"}
	case o.Binary == "":
		if o.Binary, err = os.Executable(); err != nil {
			return false, fmt.Errorf("cannot find the relay-baton binary's path: %w", err)
		}
	}
	switch o.Agent {
	case conversation.AgentCodex:
		if o.Scope == "" {
			o.Scope = "user"
		}
		bin, err := hookBinary(o.Binary, o.Uninstall)
		if err != nil {
			return false, err
		}
		return installCodexHooks(ctx, out, o.Workspace, o.Scope, bin, o.Check, o.Uninstall)
	case conversation.AgentClaude, "":
	default:
		return false, &UsageError{Msg: fmt.Sprintf("--agent must be claude or codex, not %q", o.Agent)}
	}
	if o.Scope == "" {
		o.Scope = "project"
	}
	path, err := workspace.SettingsPath(o.Scope, o.Workspace)
	if err != nil {
		return false, &UsageError{Msg: err.Error(), Hint: "relay-baton hook install --help"}
	}
	bin, err := hookBinary(o.Binary, o.Uninstall)
	if err != nil {
		return false, err
	}
	if dir, tmp := GoTemporaryBinary(bin); tmp && !o.Uninstall {
		return false, &UsageError{Msg: fmt.Sprintf("this relay-baton is a temporary binary of `go run` (%s, under %s): hooks need a path that stays; install it first, then run the installed one", bin, dir),
			Hint: "go install . && relay-baton hook install   (or: go build -o ~/.local/bin/relay-baton . && ~/.local/bin/relay-baton hook install)"}
	}
	opts := HookOptions{Binary: bin, WaitTimeout: o.WaitTimeout}
	formNote := ""
	switch o.Form {
	case FormExec:
		opts.ExecForm = true
	case FormShell, "":
	case FormAuto:
		if !o.Uninstall {
			opts.ExecForm, formNote = ClaudeExecForm(ctx, o.Env)
		}
	default:
		return false, &UsageError{Msg: fmt.Sprintf("--form must be auto, exec or shell, not %q", o.Form), Hint: "relay-baton hook install --help"}
	}
	within := o.Workspace
	if o.Scope == "user" {
		within = ""
	}
	plan, err := planHooksIn(path, within, opts, o.Uninstall)
	if err != nil {
		return false, err
	}
	if o.Check {
		if plan.Changed {
			fmt.Fprintf(out, "%s: relay-baton hooks missing or out of date (run 'relay-baton hook install --scope %s')\n", path, o.Scope)
			return false, nil
		}
		fmt.Fprintf(out, "%s: relay-baton hooks installed and current (%s)\n", path, bin)
		return true, nil
	}
	if err := plan.Apply(); err != nil {
		return false, err
	}
	switch {
	case o.Uninstall && plan.Changed:
		fmt.Fprintf(out, "Removed relay-baton's hooks from %s (other hooks kept).\n", path)
		sayKept(out, plan)
		return true, nil
	case o.Uninstall:
		fmt.Fprintf(out, "No relay-baton hooks of its own in %s.\n", path)
		sayKept(out, plan)
		return true, nil
	case plan.Changed:
		fmt.Fprintf(out, "Installed relay-baton's chat hooks in %s (other hooks kept):\n", path)
	default:
		fmt.Fprintf(out, "relay-baton's chat hooks are already installed in %s:\n", path)
	}
	for _, h := range Hooks(opts) {
		extra := ""
		if h.AsyncRewake {
			extra = ", asyncRewake"
		}
		fmt.Fprintf(out, "  %-16s %s (timeout %ds%s)\n", h.Event, h.Line(), h.Timeout, extra)
	}
	if formNote != "" {
		fmt.Fprintf(out, "Form: %s.\n", formNote)
	}
	sayKept(out, plan)
	fmt.Fprintf(out, `
Adoption rule: Claude Code reads hooks when a session starts. A session
started before this install is reached by its messaging socket alone, with no
hook lane to fall back on; start (or resume) it again to give it these hooks.

Lanes: the Stop hook delivers queued messages at turn ends; the asyncRewake
waiter delivers while the session is idle (for up to %s after each turn;
a 'claude -p --input-format stream-json' session waits for it when its stdin
closes: use --wait-timeout for such sessions, or end them with a signal).
Optional Monitor lane, for a session that should arm it itself: ask it to run
the Monitor tool with the command
  %s wait --session <its session id>
`, o.WaitTimeout, ShellQuote(bin))
	return true, nil
}

// sayKept says where the file as it was is kept, when it was changed, that
// a symlink was kept, and which entries that call relay-baton are the
// user's own and were left as they are.
func sayKept(out io.Writer, plan HookPlan) {
	if plan.Changed && plan.Target != "" && plan.Target != plan.Path {
		fmt.Fprintf(out, "%s is a symlink: kept; its target %s was edited.\n", plan.Path, plan.Target)
	}
	if b := plan.BackupPath(); plan.Changed && b != "" {
		fmt.Fprintf(out, "The file as it was is kept in %s.\n", b)
	}
	if kept := ForeignRelayBatonHooks(plan.After); len(kept) > 0 {
		fmt.Fprintf(out, "Left as they are (they call relay-baton but are not relay-baton's own entries; edit them by hand):\n")
		for _, c := range kept {
			fmt.Fprintf(out, "  %s\n", render.InertLine(c))
		}
	}
}

// CheckHooks reports, for the project and local settings files (when root,
// the repository, is known) and the user's, whether relay-baton's chat
// hooks of the binary bin are in them. Nothing is written; a settings file
// that is a FIFO or a device is reported, never opened blocking.
func CheckHooks(root, bin string) []reports.Check {
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	var out []reports.Check
	for _, scope := range []string{"project", "local", "user"} {
		if scope != "user" && root == "" {
			continue
		}
		path, err := workspace.SettingsPath(scope, root)
		if err != nil {
			continue
		}
		name := "hooks (" + scope + ")"
		data, err := safeio.ReadRegular(path, 16<<20)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if scope == "local" {
				continue // rarely used: not worth a line when absent
			}
			out = append(out, reports.Check{Name: name, Status: reports.OK, Detail: path + " absent: no chat hooks (relay-baton hook install --scope " + scope + " adds them)"})
		case err != nil:
			out = append(out, reports.Check{Name: name, Status: reports.Warn, Detail: err.Error()})
		case bin != "" && slices.Contains(StopHookBinaries(data), bin):
			out = append(out, reports.Check{Name: name, Status: reports.OK, Detail: "chat hooks of this binary in " + path})
		case len(StopHookBinaries(data)) > 0:
			out = append(out, reports.Check{Name: name, Status: reports.Warn, Detail: path + " has chat hooks of another relay-baton binary: run 'relay-baton hook install --scope " + scope + "' with this one"})
		default:
			out = append(out, reports.Check{Name: name, Status: reports.OK, Detail: "no relay-baton hooks in " + path})
		}
	}
	return out
}

// hookBinary is the path the hooks name: the binary with its links
// resolved, unless that loses the name relay-baton (a link named
// relay-baton to a binary named otherwise: the link's path then). The
// hooks are told from other tools' by that name (isOurs), so a binary of
// another name is refused: its hooks would be added again at each install
// and never found current by --check.
func hookBinary(exe string, uninstall bool) (string, error) {
	bin := exe
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	switch {
	case ourName(bin) || uninstall:
		return bin, nil
	case ourName(exe):
		return exe, nil
	}
	return "", &UsageError{
		Msg:  fmt.Sprintf("this binary is named %s, and relay-baton's hooks are told from other tools' hooks by a program named relay-baton: install or link it under that name, then run hook install from there", filepath.Base(exe)),
		Hint: fmt.Sprintf("ln -s %s ~/.local/bin/relay-baton && ~/.local/bin/relay-baton hook install", exe),
	}
}

// ourName: a program named relay-baton (relay-baton.exe included).
func ourName(bin string) bool { return strings.HasPrefix(filepath.Base(bin), "relay-baton") }
