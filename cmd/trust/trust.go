// Package trust holds `relay-baton trust`: its row of the command table,
// its flags and its Run (trust, --revoke, --list of a repository's
// .relay-baton.json).
package trust

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/cli"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/workspace"
)

// trustResult is what `trust` (and --revoke) did, for --json.
type trustResult struct {
	Action     string             `json:"action"` // trusted, revoked, not-trusted (nothing to revoke)
	Config     agents.ConfigTrust `json:"config"`
	Record     string             `json:"record"` // the trust record's path
	ClaudeArgs []string           `json:"claudeArgs,omitempty"`
	CodexArgs  []string           `json:"codexArgs,omitempty"`
	Timeout    string             `json:"timeout,omitempty"`
	AllowEnv   []string           `json:"allowEnv,omitempty"`
}

// trustListEntry is one line of `trust --list`.
type trustListEntry struct {
	agents.TrustEntry
	State string `json:"state"` // trusted, changed (ignored until trusted again), missing
}

// Trust is its command's row of the table (usage, help) and its Run.
var Trust = &cli.Command{
	Entry: cli.Entry{Name: "trust", Usage: "[--path DIR] [--revoke | --list] [--json]", Short: "Trust this repository's .relay-baton.json so that agents run with it"},
	Long: `A repository's .relay-baton.json (extra claude and codex arguments, a timeout,
allowEnv) is ignored until you trust it: read it, then run relay-baton trust in the
repository. Its absolute path and SHA-256 are recorded in your config folder
(relay-baton/trusted.json there, mode 0600), never in the repository. Any change to
the file untrusts it again: until you trust it anew, agents run without it and every
preview says so in one line.

Even trusted, arguments that start processes or widen an agent's permissions are
refused by name (MCP servers, notify, hooks, plugins, settings, tool allow-lists,
extra directories, profiles, sandbox, approval and permission settings): trust
fails and says which. --revoke forgets the repository's file; --list shows every
trusted file and whether it changed since (read-only). --json prints JSON.

Exit codes: 0 done, 1 the file cannot be trusted (missing, malformed, refused
arguments) or the record cannot be written, 2 usage.`,
	Run: runTrust,
}

func runTrust(inv *cli.Invocation) error {
	flags := inv.Flags()
	path := flags.String("path", ".", "a directory inside the git repository")
	revoke := flags.Bool("revoke", false, "forget the repository's .relay-baton.json: it is ignored again")
	list := flags.Bool("list", false, "list every trusted config file and whether it changed since (read-only)")
	js := flags.Bool("json", false, "print JSON")
	if err := inv.Parse(flags); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return cli.Usagef("trust takes no arguments, got %q (use --path DIR for another repository)", strings.Join(flags.Args(), " "))
	}
	if *revoke && *list {
		return cli.Usagef("--revoke and --list do not go together")
	}
	record, err := agents.TrustPath()
	if err != nil {
		return err
	}
	if *list {
		return trustList(inv, record, *js)
	}
	root, err := workspace.FindRoot(*path)
	if err != nil {
		if errors.Is(err, workspace.ErrNotGitRepo) {
			return &cli.UsageError{Msg: err.Error(), Hint: "relay-baton trust --path DIR"}
		}
		return err
	}
	if *revoke {
		return trustRevoke(inv, root, record, *js)
	}
	return trustRepo(inv, root, record, *js)
}

// trustRevoke forgets root's config (trust --revoke).
func trustRevoke(inv *cli.Invocation, root, record string, js bool) error {
	res := trustResult{Record: record}
	found, err := agents.RevokeConfig(root)
	if err != nil {
		return err
	}
	res.Action = "revoked"
	if !found {
		res.Action = "not-trusted"
	}
	if res.Config, _, err = agents.CheckTrust(root); err != nil {
		return err
	}
	if js {
		return inv.PrintJSON(res)
	}
	if found {
		_, err = fmt.Fprintf(inv.IO.Out, "revoked: %s is ignored from now on (relay-baton trust uses it again)\n", render.InertLine(res.Config.Path))
	} else {
		_, err = fmt.Fprintf(inv.IO.Out, "%s was not trusted: nothing to revoke\n", render.InertLine(res.Config.Path))
	}
	return err
}

// trustRepo trusts root's config as it is now and says what agents run
// with from now on.
func trustRepo(inv *cli.Invocation, root, record string, js bool) error {
	res := trustResult{Record: record}
	cfg, err := agents.TrustConfig(root)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	res.Action = "trusted"
	res.Config, _, _ = agents.CheckTrust(root)
	res.ClaudeArgs, res.CodexArgs, res.AllowEnv = cfg.Args(agents.Claude), cfg.Args(agents.Codex), cfg.AllowEnv
	if cfg.Timeout > 0 {
		res.Timeout = cfg.Timeout.String()
	}
	if js {
		return inv.PrintJSON(res)
	}
	_, err = io.WriteString(inv.IO.Out, res.text())
	return err
}

// text is what trust prints after trusting a config.
func (res trustResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trusted: %s (sha256 %s…)\n", render.InertLine(res.Config.Path), res.Config.SHA256[:12])
	show := func(name string, v []string) {
		if len(v) > 0 {
			q := make([]string, len(v))
			for i, a := range v {
				q[i] = render.InertLine(fmt.Sprintf("%q", a))
			}
			fmt.Fprintf(&b, "  %-12s %s\n", name, strings.Join(q, " "))
		}
	}
	show("claude args", res.ClaudeArgs)
	show("codex args", res.CodexArgs)
	show("allowEnv", res.AllowEnv)
	if res.Timeout != "" {
		fmt.Fprintf(&b, "  %-12s %s\n", "timeout", res.Timeout)
	}
	b.WriteString("Agents now run with it; any change to the file untrusts it (relay-baton trust --revoke forgets it).\n")
	return b.String()
}

func trustList(inv *cli.Invocation, record string, js bool) error {
	entries, err := agents.TrustedConfigs()
	if err != nil {
		return err
	}
	out := make([]trustListEntry, 0, len(entries))
	for _, e := range entries {
		state := "trusted"
		b, err := agents.ReadConfigFile(e.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state = "missing"
		case err != nil:
			state = "unreadable"
		case agents.ConfigSum(b) != e.SHA256:
			state = "changed"
		}
		out = append(out, trustListEntry{TrustEntry: e, State: state})
	}
	if js {
		return inv.PrintJSON(struct {
			Record  string           `json:"record"`
			Trusted []trustListEntry `json:"trusted"`
		}{record, out})
	}
	if len(out) == 0 {
		_, err := fmt.Fprintf(inv.IO.Out, "no trusted config (record: %s); run relay-baton trust in a repository to trust its %s\n", render.InertLine(record), agents.ConfigName)
		return err
	}
	var b strings.Builder
	for _, e := range out {
		note := ""
		switch e.State {
		case "changed":
			note = " (changed since: ignored until trusted again)"
		case "missing":
			note = " (file gone)"
		case "unreadable":
			note = " (cannot be read)"
		}
		at := "-"
		if !e.TrustedAt.IsZero() {
			at = e.TrustedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(&b, "%-9s %s  %s%s\n", e.State, at, render.InertLine(e.Path), note)
	}
	_, err = inv.IO.Out.Write([]byte(b.String()))
	return err
}
