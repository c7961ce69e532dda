package hookinstall

import (
	"context"
	"fmt"
	"io"

	"github.com/relay-baton/relay-baton/conversation"
	"github.com/relay-baton/relay-baton/conversation/codex"
)

// `relay-baton hook install --agent codex`: the chat hooks in Codex's
// hooks.json, and the trust Codex needs before it runs them
// (codex_hooks.go). Install calls it for Agent codex.

// installCodexHooks installs (or checks, or removes) relay-baton's hooks for
// Codex and says what it did on out. bin is relay-baton's own path,
// symlinks resolved. current is false when the hooks are missing, out of
// date or not trusted by Codex (said on out).
func installCodexHooks(ctx context.Context, out io.Writer, ws, scope, bin string, check, uninstall bool) (current bool, err error) {
	path, err := CodexHooksPath(scope, ws)
	if err != nil {
		return false, &UsageError{Msg: err.Error(), Hint: "relay-baton hook install --help"}
	}
	opts := HookOptions{Binary: bin, Agent: conversation.AgentCodex}
	within := ws
	if scope == "user" {
		within = ""
	}
	plan, err := planHooksIn(path, within, opts, uninstall)
	if err != nil {
		return false, err
	}
	codexBin := codex.Binary()
	manual := func() {
		fmt.Fprintf(out, `Codex runs a hook only once it is trusted. To trust these by hand, start codex
(in %s), open /hooks, and trust the relay-baton entries; or run this again
with the codex CLI on PATH (or RELAY_BATON_CODEX set) so relay-baton records
the trust Codex reports (codex app-server hooks/list) in %s.
`, ws, codex.Home()+"/config.toml")
	}
	if check {
		if plan.Changed {
			fmt.Fprintf(out, "%s: relay-baton's Codex hooks missing or out of date (run 'relay-baton hook install --agent codex --scope %s')\n", path, scope)
			return false, nil
		}
		if codexBin == "" {
			fmt.Fprintf(out, "%s: relay-baton's Codex hooks installed (%s); trust unknown: codex CLI not found\n", path, bin)
			manual()
			return false, nil
		}
		rep, err := TrustCodexHooks(ctx, codexBin, path, ws, true)
		if err != nil {
			return false, fmt.Errorf("%s: cannot ask codex whether the hooks are trusted: %w", path, err)
		}
		bad := printCodexHooks(out, rep, len(Hooks(opts)))
		if bad {
			fmt.Fprintf(out, "%s: relay-baton's Codex hooks installed but not trusted by Codex: they do not run (run 'relay-baton hook install --agent codex --scope %s')\n", path, scope)
			return false, nil
		}
		fmt.Fprintf(out, "%s: relay-baton's Codex hooks installed, current and trusted (%s)\n", path, bin)
		return true, nil
	}
	if err := plan.Apply(); err != nil {
		return false, err
	}
	if uninstall {
		if plan.Changed {
			fmt.Fprintf(out, "Removed relay-baton's hooks from %s (other hooks kept). Their trust entries in config.toml name hashes of the removed commands and trust nothing else.\n", path)
		} else {
			fmt.Fprintf(out, "No relay-baton hooks of its own in %s.\n", path)
		}
		sayKept(out, plan)
		return true, nil
	}
	if plan.Changed {
		fmt.Fprintf(out, "Installed relay-baton's chat hooks for Codex in %s (other hooks kept):\n", path)
	} else {
		fmt.Fprintf(out, "relay-baton's chat hooks for Codex are already installed in %s:\n", path)
	}
	for _, h := range Hooks(opts) {
		fmt.Fprintf(out, "  %-16s %s (timeout %ds)\n", h.Event, h.Command, h.Timeout)
	}
	sayKept(out, plan)
	if codexBin == "" {
		fmt.Fprintln(out)
		manual()
		return true, nil
	}
	rep, err := TrustCodexHooks(ctx, codexBin, path, ws, false)
	if err != nil {
		fmt.Fprintf(out, "\nCould not record Codex's trust: %v\n", err)
		manual()
		return false, nil
	}
	fmt.Fprintln(out)
	if len(rep.Trusted) > 0 {
		fmt.Fprintf(out, "Trusted %d hook(s) in %s/config.toml (hooks.state, the hashes codex app-server reported):\n", len(rep.Trusted), codex.Home())
	}
	if printCodexHooks(out, rep, len(Hooks(opts))) {
		fmt.Fprintln(out, "Codex does not trust all of them: they will not run.")
		if scope == "project" {
			fmt.Fprintf(out, "Codex reads %s only in a trusted project: start codex in %s and trust the project, then run this again.\n", path, ws)
		}
		manual()
		return false, nil
	}
	fmt.Fprint(out, `
Adoption rule: Codex reads hooks when a session starts. Sessions started
before this install deliver only through the queue lane (while idle).

Lanes: the Stop hook delivers queued messages at turn ends; while a loaded
session is idle, relay-baton hands the message to 'codex queue'.
`)
	return true, nil
}

// printCodexHooks lists relay-baton's hooks as Codex reports them; bad is
// true when one is missing or not trusted.
func printCodexHooks(out io.Writer, rep CodexTrustReport, want int) (bad bool) {
	for _, h := range rep.Hooks {
		fmt.Fprintf(out, "  %-9s %-20s %s\n", h.TrustStatus, h.EventName, h.Key)
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
			bad = true
		}
	}
	if len(rep.Hooks) < want {
		fmt.Fprintf(out, "  codex loads %d of relay-baton's %d hooks\n", len(rep.Hooks), want)
		bad = true
	}
	return bad
}
