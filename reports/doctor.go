package reports

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
	"github.com/relay-baton/relay-baton/events/render"
	"github.com/relay-baton/relay-baton/gitrepo"
	"github.com/relay-baton/relay-baton/safeio"
	"github.com/relay-baton/relay-baton/subprocess"
)

// Preparer builds an agent's invocation without running it (the room's
// agent runner).
type Preparer interface {
	Prepare(agents.Request) (agents.Invocation, error)
}

// Facts are what doctor needs to know of the room it checks.
type Facts struct {
	Root           string // the repository; "" outside any
	SessionDir     string // .ai-session
	LogPath        string // conversation.jsonl
	ReadOnly       bool   // a report: nothing may be written
	AllowAPIKeyEnv bool   // --allow-api-key-env
	Getenv         func(string) string
	Agents         Preparer
	// CanWrite checks, writing nothing, that a folder is writable (for
	// ReadOnly).
	CanWrite func(dir string) error
}

// RunDoctor checks the environment; deep adds agent versions, .ai-session
// health, conversation.jsonl parse errors and forbidden agent arguments.
func RunDoctor(ctx context.Context, f Facts, deep bool) Doctor {
	r := Doctor{Deep: deep}
	r.gitChecks(ctx, f.Root)
	for _, name := range []string{agents.Claude, agents.Codex} {
		r.agentChecks(ctx, f, name, deep)
	}
	r.Checks = append(r.Checks, apiKeyCheck(f.Getenv, f.AllowAPIKeyEnv, r.providerKey), userConfigCheck())
	if f.Root != "" {
		r.Checks = append(r.Checks, configCheck(f.Root), claudeSettingsCheck(f.Root, f.Getenv))
	}
	if deep && f.Root != "" {
		r.sessionChecks(f)
		r.Checks = append(r.Checks, logCheck(f.LogPath))
	}
	return r
}

// gitChecks: git's version, and the repository (or why there is none).
func (r *Doctor) gitChecks(ctx context.Context, root string) {
	if v, err := gitrepo.Run(ctx, root, "--version"); err != nil {
		r.add("git", Fail, err.Error())
	} else if root == "" {
		r.add("git", OK, strings.TrimSpace(v))
		r.add("repository", Skip, "not inside a git repository: repository checks were skipped (.ai-session, conversation.jsonl); run doctor in one, or pass --path")
	} else {
		r.add("git", OK, strings.TrimSpace(v)+" · repository "+root)
	}
}

// agentRoles are the roles an agent's arguments are checked in.
var agentRoles = []agents.Role{agents.RolePlanner, agents.RoleExecutor, agents.RoleReviewer, agents.RoleAsk}

// agentChecks: the agent's CLI (and, deep, its version), its login, and
// (deep) that no role's arguments disable the safety rails.
func (r *Doctor) agentChecks(ctx context.Context, f Facts, name string, deep bool) {
	inv, err := f.Agents.Prepare(agents.Request{Agent: name, Role: agentRoles[0], Prompt: "doctor", Dir: f.Root, AllowAPIKeyEnv: f.AllowAPIKeyEnv})
	if err != nil {
		r.add(name, Fail, err.Error())
		return
	}
	detail := inv.Path
	if deep {
		detail += " · " + agentVersion(ctx, inv.Path)
	}
	r.add(name, OK, detail)
	// A codex provider that reads its key from a variable needs no login:
	// it needs that variable, which relay-baton holds back unless passed.
	if name == agents.Codex {
		if k, ok := agents.CodexProviderKeyOf(inv); ok {
			r.providerKey = &k
			st := OK
			if !k.Passed {
				st = Fail
			}
			r.add(name+" key", st, k.Line())
			if deep {
				r.Checks = append(r.Checks, argumentsCheck(f, name))
			}
			return
		}
	}
	// The login, asked of the CLI offline, with the environment its
	// runs get (API-key variables removed unless passed).
	switch ls := agents.CheckLogin(ctx, name, inv.Path, inv.Env); {
	case !ls.Known:
		r.add(name+" login", Warn, "login state unknown ("+ls.Detail+"); if its runs say it is not logged in: "+agents.LoginHowTo(name))
	case ls.NoLogin != "":
		r.add(name+" login", OK, "no login needed (provider "+ls.NoLogin+")")
	case ls.LoggedIn:
		r.add(name+" login", OK, "logged in ("+ls.Method+")")
	default:
		r.add(name+" login", Fail, "not logged in: "+agents.LoginHowTo(name)+" (once), then run relay-baton doctor again")
	}
	if deep {
		r.Checks = append(r.Checks, argumentsCheck(f, name))
	}
}

// argumentsCheck looks for forbidden arguments in every role's argv.
func argumentsCheck(f Facts, name string) Check {
	var bad []string
	for _, role := range agentRoles {
		inv, err := f.Agents.Prepare(agents.Request{Agent: name, Role: role, Prompt: "doctor", Dir: f.Root})
		if err != nil {
			continue
		}
		// agents' own list (agents.Forbidden), never a copy of it.
		for _, a := range agents.ForbiddenArgs(inv.Argv) {
			bad = append(bad, fmt.Sprintf("%s (%s)", a, role))
		}
	}
	if len(bad) > 0 {
		return Check{name + " arguments", Fail, "forbidden: " + strings.Join(bad, ", ")}
	}
	return Check{name + " arguments", OK, "no argument in any role's argv disables permission checks or the sandbox (" + strings.Join(agents.Forbidden(), ", ") + ")"}
}

// apiKeyCheck: which API-key variables are set, and whether they reach
// the agents.
// pk, when codex's provider reads its key from a variable, is said too.
func apiKeyCheck(getenv func(string) string, allow bool, pk *agents.ProviderKey) Check {
	var present []string
	for _, k := range agents.KeyVars { // agents' own list, never a copy
		if getenv(k) != "" {
			present = append(present, k)
		}
	}
	provider := ""
	if pk != nil {
		state := "not set"
		switch {
		case pk.Passed:
			state = "set, passed to codex"
		case pk.Set:
			state = "set, held back: pass it with --allow-env " + pk.Name
		}
		provider = fmt.Sprintf("; codex provider %s reads %s (%s)", pk.Provider, pk.Name, state)
	}
	switch {
	case len(present) == 0 && pk != nil:
		return Check{"api keys", OK, "none of " + strings.Join(agents.KeyVars, ", ") + " set" + provider}
	case len(present) == 0:
		return Check{"api keys", OK, "none set (agents use their CLI login)"}
	case allow:
		return Check{"api keys", Warn, "PASSED to agents, each its own (--allow-api-key-env, audited): " + strings.Join(present, ", ") + provider}
	}
	return Check{"api keys", OK, "present, blocked from agents: " + strings.Join(present, ", ") + provider}
}

// sessionChecks: .ai-session exists and is writable, and relay-baton's
// own documents there are regular files.
func (r *Doctor) sessionChecks(f Facts) {
	dir := f.SessionDir
	if fi, err := os.Stat(dir); os.IsNotExist(err) && f.ReadOnly {
		r.add(".ai-session", OK, fmt.Sprintf("%s not created yet (the first recorded command creates it)", dir))
		return
	} else if err != nil || !fi.IsDir() {
		r.add(".ai-session", Fail, fmt.Sprintf("%s missing", dir))
		return
	}
	if err := dirWritable(dir, f.ReadOnly, f.CanWrite); err != nil {
		r.add(".ai-session", Fail, "not writable: "+err.Error())
		return
	}
	var files []string
	for _, n := range []string{events.PlanFile, events.HandoffFile, events.ReviewFile, agents.CommandsLogName, "conversation.jsonl"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Size() > 0 {
			files = append(files, fmt.Sprintf("%s %dB", n, fi.Size()))
		}
	}
	r.add(".ai-session", OK, "writable; "+strings.Join(append([]string{dir}, files...), " · "))
	// relay-baton's own documents there: a FIFO, a link or a folder in
	// their place makes the commands that use them refuse.
	for _, n := range []string{events.PlanFile, events.HandoffFile, events.ReviewFile, agents.CommandsLogName} {
		f, err := safeio.OpenOwned(filepath.Join(dir, n))
		if err == nil {
			f.Close()
		} else if !errors.Is(err, fs.ErrNotExist) {
			r.add(n, Fail, err.Error())
		}
	}
}

// logCheck: conversation.jsonl is a regular file whose lines parse.
func logCheck(path string) Check {
	const name = "conversation.jsonl"
	f, err := safeio.OpenOwned(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Check{name, OK, "no events recorded yet"}
	} else if err != nil {
		return Check{name, Warn, err.Error()}
	}
	st, err := events.Scan(f, func(events.Event) error { return nil })
	f.Close()
	switch {
	case err != nil:
		return Check{name, Fail, err.Error()}
	case st.Skipped() > 0:
		return Check{name, Warn, fmt.Sprintf("%s, %s to parse (%d malformed, %d too long): readers skip them", render.Count(st.Events, "event"), render.Count(st.Skipped(), "line fails|lines fail"), st.Malformed, st.TooLong)}
	}
	return Check{name, OK, fmt.Sprintf("%s, all lines parse", render.Count(st.Events, "event"))}
}

// dirWritable checks that dir is writable: by creating (and removing) a
// file in it, or, when readOnly, with canWrite alone, which writes nothing.
func dirWritable(dir string, readOnly bool, canWrite func(string) error) error {
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
	out, err := subprocess.Output(ctx, subprocess.Command(path, "--version"))
	if err != nil {
		return "version unknown: " + err.Error()
	}
	return render.Cut(string(out), 80)
}

// claudeSettingsCheck is doctor's line about the folder's Claude Code
// project settings (.claude/settings.json, .mcp.json): loaded in claude
// runs only where Claude Code itself trusts the folder, as the preview says.
func claudeSettingsCheck(root string, getenv func(string) string) Check {
	var env []string
	for _, k := range []string{"HOME", "USERPROFILE", "CLAUDE_CONFIG_DIR"} {
		env = append(env, k+"="+getenv(k))
	}
	ct := agents.CheckClaudeTrust(root, env)
	if ct.Unreadable {
		return Check{"project settings", Warn, agents.ClaudeSettingsLine(ct) + "; " + ct.Why}
	}
	return Check{"project settings", OK, agents.ClaudeSettingsLine(ct)}
}

// configCheck is doctor's line about the repository's .relay-baton.json:
// absent, trusted (with what it adds), ignored (not trusted or changed), or
// refused.
func configCheck(root string) Check {
	name := agents.ConfigName
	st, _, err := agents.CheckTrust(root)
	switch {
	case err != nil:
		return Check{name, Fail, err.Error()}
	case !st.Exists:
		return Check{name, OK, "none (agents run with relay-baton's arguments only)"}
	case st.Changed:
		return Check{name, Warn, "ignored: changed since you trusted it (review it, then run relay-baton trust)"}
	case !st.Trusted:
		return Check{name, Warn, "ignored: not trusted (review it, then run relay-baton trust to use it)"}
	}
	cfg, err := agents.LoadConfig(root)
	if err != nil {
		return Check{name, Fail, err.Error()}
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
		return Check{name, OK, "trusted; adds no argument"}
	}
	return Check{name, OK, "trusted; adds " + strings.Join(parts, " · ")}
}

// userConfigCheck: the user's own config (agents.UserConfigName), what it
// adds to every run, or why it stops them.
func userConfigCheck() Check {
	const name = "your config"
	u, err := agents.LoadUserConfig()
	switch {
	case err != nil:
		return Check{name, Fail, err.Error() + " (every agent run stops on it)"}
	case u.Path == "":
		p, _ := agents.UserConfigPath()
		return Check{name, OK, "none (" + p + " would add arguments to every run)"}
	}
	var parts []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		if args := u.Args(a); len(args) > 0 {
			parts = append(parts, a+" "+strings.Join(args, " "))
		}
	}
	if len(parts) == 0 {
		return Check{name, OK, u.Path + " adds no argument"}
	}
	return Check{name, OK, u.Path + " adds " + strings.Join(parts, " · ")}
}
