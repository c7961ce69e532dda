package agents

import (
	"context"
	"errors"
)

// Prepare resolves the binary and builds the exact argv, environment and
// policy for req, without starting anything. The room shows it as the
// preview; Run starts exactly this.
func Prepare(req Request) (Invocation, error) {
	return Invocation{}, errors.New("agents.Prepare: not built yet")
}

// Run starts the agent, streams its activity to req.OnActivity, and waits.
// It never panics and always returns a Result whose Summary says what
// happened in one line; Err is set when the run did not succeed.
func Run(ctx context.Context, req Request) Result {
	err := errors.New("agents.Run: not built yet")
	return Result{Agent: req.Agent, ExitCode: -1, Err: err, Summary: err.Error()}
}
