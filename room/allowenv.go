package room

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/events"
)

// cmdAllowEnv is /allow-env NAME...: from now on, in this room, the agents
// get those variables (as --allow-env NAME at start would have passed
// them). Every later preview lists them; the turn is logged as an audit
// event. With no name it lists the names passed so.
func cmdAllowEnv(e *Engine, _ context.Context, args string) error {
	names := strings.Fields(args)
	if len(names) == 0 {
		if len(e.passEnv) == 0 {
			e.Say("no variable is passed on purpose (/allow-env NAME passes one to the agents, in this room; --allow-env NAME at start does the same)")
		} else {
			e.Say("passed to the agents on purpose: %s", strings.Join(e.passEnv, ", "))
		}
		return nil
	}
	for _, n := range names {
		if !agents.ValidEnvName(n) {
			return fmt.Errorf("/allow-env takes variable names (letters, digits and _, not starting with a digit), not %q: for example /allow-env X_API_KEY", n)
		}
	}
	var added []string
	for _, n := range names {
		if !slices.ContainsFunc(e.passEnv, func(p string) bool { return strings.EqualFold(p, n) }) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		e.Say("already passed to the agents: %s", strings.Join(names, ", "))
		return nil
	}
	// A copy: the config's slice is never appended to in place.
	e.passEnv = append(slices.Clip(e.passEnv), added...)
	list := strings.Join(added, ", ")
	e.emit(events.RoleRelayBaton, "allowed for the agents from now on (/allow-env): "+list, nil, events.AuditMeta{Vars: added})
	var unset []string
	for _, n := range added {
		if e.getenv(n) == "" {
			unset = append(unset, n)
		}
	}
	e.Say("%s now passed to claude and codex in this room (every preview lists it; each run that passes it is audited). For good, in this repository: \"allowEnv\": [%q] in .relay-baton.json, then relay-baton trust.",
		list, added[0])
	if len(unset) > 0 {
		e.Say("not set in relay-baton's environment: %s: set it, then restart the room with --allow-env %s", strings.Join(unset, ", "), unset[0])
	}
	return nil
}

// allowedNotPassed are the names passed on purpose (/allow-env,
// --allow-env, allowEnv) that an invocation did not list as passed: not
// set, or not credential-like (they pass as any variable does).
func allowedNotPassed(allowed []string, inv agents.Invocation) (unset, plain []string) {
	for _, n := range allowed {
		if slices.ContainsFunc(inv.Passed, func(p string) bool { return strings.EqualFold(p, n) }) {
			continue
		}
		if envHas(inv.Env, n) {
			plain = append(plain, n)
		} else {
			unset = append(unset, n)
		}
	}
	return unset, plain
}

func envHas(env []string, name string) bool {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name && v != "" {
			return true
		}
	}
	return false
}
