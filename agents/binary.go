package agents

import "os"

// Binary is the agent's CLI as relay-baton runs it (claude or codex):
// $RELAY_BATON_CLAUDE / $RELAY_BATON_CODEX, else the name on PATH. The
// error says how to install or point at it (it wraps ErrNotFound).
func Binary(agent string) (string, error) {
	p, _, err := resolveBinary(agent, os.Environ())
	return p, err
}
