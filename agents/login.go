package agents

import (
	"errors"
	"strings"
)

// ErrNotLoggedIn is wrapped by the error of a run the agent's CLI refused
// because it has no valid login.
var ErrNotLoggedIn = errors.New("not logged in")

// LoginError is a run's error when the agent is not logged in: its message
// is the one line that says how to log in.
type LoginError struct{ Agent string }

func (e *LoginError) Error() string { return LoginHint(e.Agent) }
func (e *LoginError) Unwrap() error { return ErrNotLoggedIn }

// LoginHint is the one line a run refused for want of a login ends with.
func LoginHint(agent string) string {
	return agent + " is not logged in: " + LoginHowTo(agent) + ", then try again"
}

// LoginHowTo says how to log the agent in (once; relay-baton never does it).
func LoginHowTo(agent string) string {
	if agent == Codex {
		return "run `codex login` in a terminal"
	}
	return "run `claude` in a terminal of its own and type /login"
}

// Measured on claude 2.1.328 (no credentials: an assistant line with
// "error":"authentication_failed" and the text "Not logged in · Please run
// /login", then an is_error result with the same text) and codex 0.169.0
// (a provider answering 401: "unexpected status 401 Unauthorized: ..."),
// plus the other login messages both binaries carry.
var (
	claudeLoginTexts = []string{"not logged in", "please run /login", "invalid api key", "oauth token revoked", "login expired", "run /login to sign in again"}
	codexLoginTexts  = []string{"401 unauthorized", "not signed in", "not logged in", "run 'codex login'", "run `codex login`", "please re-run codex login", "missing bearer"}
)

// notLoggedInText reports whether an agent's error text says it has no
// valid login.
func notLoggedInText(agent, text string) bool {
	t := strings.ToLower(text)
	list := claudeLoginTexts
	if agent == Codex {
		list = codexLoginTexts
	}
	for _, s := range list {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
