package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/subprocess"
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

// LoginState is what an agent's CLI says of its login, asked offline
// (`claude auth status`, `codex login status`: neither reaches the API).
type LoginState struct {
	Known    bool   // the CLI answered in a shape understood
	LoggedIn bool   // it has a login (or an API key it will use)
	Method   string // how, in the CLI's words: "api_key_helper", "Logged in using ChatGPT", ...
	Detail   string // when not Known: why (the CLI's failure)
	// NoLogin names the model provider codex is configured with when that
	// provider needs no login (CodexNoLoginProvider): nothing to check.
	NoLogin string
}

// CheckLogin asks the agent's CLI at path whether it is logged in, with env
// as its environment (the one its runs get: API-key variables removed
// unless passed), stdin from /dev/null, bounded by ctx and 30 s.
//
// Measured on claude 2.1.328: `claude auth status` prints JSON
// {"loggedIn":false,"authMethod":"none",...} and exits 1 with no
// credentials, {"loggedIn":true,"authMethod":"api_key_helper",...} and 0
// with an apiKeyHelper (also "claude.ai" for an OAuth login). codex
// 0.169.0: `codex login status` exits 1 with "Not logged in", 0 with "API
// key configured" or "Logged in using ChatGPT" (it may warn on stderr
// first).
func CheckLogin(ctx context.Context, agent, path string, env []string) LoginState {
	if agent == Codex {
		if p, ok := CodexNoLoginProvider(env); ok {
			return LoginState{Known: true, LoggedIn: true, NoLogin: p}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"auth", "status"}
	if agent == Codex {
		args = []string{"login", "status"}
	}
	cmd := subprocess.Command(path, args...)
	if len(env) > 0 {
		cmd.Env = env
	}
	cmd.Grace = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_, err := subprocess.Run(ctx, cmd)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return LoginState{Detail: oneLine(err.Error(), 200)}
	}
	if agent == Codex {
		var lines []string
		for _, l := range strings.Split(stdout.String()+"\n"+stderr.String(), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "WARNING:") {
				lines = append(lines, l)
			}
		}
		all := strings.Join(lines, " ")
		switch {
		case err == nil && len(lines) > 0:
			return LoginState{Known: true, LoggedIn: true, Method: oneLine(lines[0], 80)}
		case strings.Contains(strings.ToLower(all), "not logged in"):
			return LoginState{Known: true}
		}
		return LoginState{Detail: oneLine("codex login status: "+firstNonEmpty(all, errString(err)), 200)}
	}
	var st struct {
		LoggedIn   *bool  `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &st); jerr != nil || st.LoggedIn == nil {
		return LoginState{Detail: oneLine("claude auth status: "+firstNonEmpty(strings.TrimSpace(stderr.String()), strings.TrimSpace(stdout.String()), errString(err)), 200)}
	}
	return LoginState{Known: true, LoggedIn: *st.LoggedIn, Method: oneLine(st.AuthMethod, 80)}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return "no answer"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
