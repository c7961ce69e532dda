package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Timeout bounds one git command run by Run.
const Timeout = 30 * time.Second

// Cmd says how git is run: in the work tree Root, with Env added to the
// environment, for at most Timeout (0: the package's Timeout).
type Cmd struct {
	Root    string
	Env     []string
	Timeout time.Duration
}

// Run runs git -C root args (no shell) and returns its stdout.
func Run(ctx context.Context, root string, args ...string) (string, error) {
	return Cmd{Root: root}.Run(ctx, args...)
}

// Run runs git -C c.Root args (no shell) and returns its stdout. relay-baton
// only reads through it or writes to stores of its own: no index refresh
// under index.lock (GIT_OPTIONAL_LOCKS=0), so a cancelled query (the
// context panel's, when a line is entered) never leaves a stale lock nor
// contends with an agent's git; and git never prompts for credentials. An
// error names the command, wraps the cause (the context's when it ended,
// not "signal: killed") and ends with the first line git wrote to stderr.
func (c Cmd) Run(ctx context.Context, args ...string) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", c.Root}, args...)...)
	cmd.Env = append(append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0"), c.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		line, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(line))
	}
	return out.String(), nil
}
