package selftest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/subprocess"
)

// allowedFlags checks that the CLI's --help still lists every flag a
// trusted repository config may pass to it (agents.AllowedFlags): an
// upgrade that renames or removes one is seen here, before a run fails on
// it or the flag comes to mean something else.
func allowedFlags(ctx context.Context, c checkFunc, agent, bin string, env []string, step time.Duration) {
	const name = "allowed config flags"
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	args := agents.HelpArgs(agent)
	out, err := subprocess.CombinedOutput(ctx, cliCommand(bin, env, args...))
	if err != nil {
		c(name, Changed, "%s %s: %v: %s", agent, strings.Join(args, " "), err, cut(string(out), 120))
		return
	}
	if missing := agents.MissingAllowedFlags(agent, out); len(missing) > 0 {
		c(name, Changed, "%s %s no longer lists %s, which a trusted .relay-baton.json may pass: such a config now fails or means something else (relay-baton needs an update)",
			agent, strings.Join(args, " "), strings.Join(missing, ", "))
		return
	}
	var fl []string
	for _, f := range agents.AllowedFlags {
		if f.Agent == agent {
			fl = append(fl, f.String())
		}
	}
	c(name, OK, "%s", fmt.Sprintf("%s %s lists %s", agent, strings.Join(args, " "), strings.Join(fl, ", ")))
}
