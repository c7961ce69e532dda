package agents_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/events"
)

// A CLI without a valid login: the run fails with ErrNotLoggedIn, its
// summary is one line naming the fix, and none of the CLI's own failure
// lines reach the activity stream. claude runs with an empty HOME (no
// credentials at all: it answers "Not logged in · Please run /login"
// without a request); codex against a provider that answers 401.
func TestNotLoggedInE2E(t *testing.T) {
	root := agenttest.GitRepo(t, map[string]string{"a.txt": "hello\n"})
	o := agenttest.NewOpenAI(t, agenttest.Step{Status: 401, Message: "Incorrect API key provided"}, agenttest.Step{Status: 401, Message: "Incorrect API key provided"})
	cases := []struct {
		agent, fix string
		env        []string
	}{
		{agents.Claude, "run `claude` in a terminal of its own and type /login", []string{"HOME=" + t.TempDir(), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
			"ANTHROPIC_BASE_URL=http://127.0.0.1:9", agents.ClaudeBinEnv + "=" + agenttest.ClaudeBin(t)}},
		{agents.Codex, "run `codex login`", agenttest.CodexEnv(t, o, agenttest.CodexBin(t))},
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			var c2 collector
			res := agents.Run(context.Background(), agents.Request{Agent: c.agent, Role: agents.RolePlanner, Prompt: "say hi", Dir: root, Env: c.env, OnActivity: c2.add})
			if !errors.Is(res.Err, agents.ErrNotLoggedIn) || res.ExitCode == 0 {
				t.Fatalf("err %v, exit %d, summary %q", res.Err, res.ExitCode, res.Summary)
			}
			if !strings.Contains(res.Summary, c.fix) || strings.Contains(res.Summary, "\n") || res.Err.Error() != agents.LoginHint(c.agent) {
				t.Fatalf("summary %q, err %q", res.Summary, res.Err)
			}
			for _, a := range c2.all() {
				if a.Kind == events.ActError || a.Kind == events.ActText {
					t.Errorf("the CLI's failure reached the stream: %+v", a)
				}
			}
		})
	}
}

// The parsers hold back exactly the login failures.
func TestNotLoggedInParse(t *testing.T) {
	claude := agents.NewClaudeParser()
	var acts []events.Activity
	for _, l := range []string{
		`{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"session_id":"s","error":"authentication_failed","is_api_error_message":true}`,
		`{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"s"}`,
	} {
		acts = append(acts, claude.Line([]byte(l))...)
	}
	if o := claude.Outcome(); !o.NotLoggedIn || !o.IsError {
		t.Fatalf("claude outcome %+v", o)
	}
	for _, a := range acts {
		if a.Kind == events.ActError || a.Kind == events.ActText {
			t.Fatalf("claude login failure passed on: %+v", a)
		}
	}
	other := agents.NewClaudeParser()
	acts = other.Line([]byte(`{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 boom","session_id":"s"}`))
	if other.Outcome().NotLoggedIn || len(acts) == 0 || acts[0].Kind != events.ActError {
		t.Fatalf("an ordinary API error counted as a login failure: %+v %+v", other.Outcome(), acts)
	}
	codex := agents.NewCodexParser()
	acts = codex.Line([]byte(`{"type":"error","message":"unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses"}`))
	acts = append(acts, codex.Line([]byte(`{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided"}}`))...)
	if !codex.Outcome().NotLoggedIn || len(acts) != 1 || acts[0].Kind != events.ActDone {
		t.Fatalf("codex: %+v %+v", codex.Outcome(), acts)
	}
}

// CheckLogin asks the real CLIs, offline: with no credentials each says it
// is not logged in; with an apiKeyHelper (claude) or an auth.json holding
// a key (codex) each says it is. The environment is the one a run gets
// (Prepare's), so an API-key variable relay-baton strips does not count.
func TestCheckLoginE2E(t *testing.T) {
	root := agenttest.GitRepo(t, nil)
	a := agenttest.NewAnthropic(t)
	o := agenttest.NewOpenAI(t)
	codexIn := agenttest.CodexEnv(t, o, agenttest.CodexBin(t))
	codexHome, _ := agenttest.EnvValue(codexIn, "CODEX_HOME")
	cases := []struct {
		name, agent string
		env         []string
		setup       func()
		loggedIn    bool
	}{
		{"claude without credentials", agents.Claude, []string{"HOME=" + t.TempDir(), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
			"ANTHROPIC_API_KEY=sk-stripped", agents.ClaudeBinEnv + "=" + agenttest.ClaudeBin(t)}, nil, false},
		{"claude with an apiKeyHelper", agents.Claude, agenttest.ClaudeEnv(t, a, agenttest.ClaudeBin(t)), nil, true},
		// The mock provider has no env_key: nothing to log in to.
		{"codex with a provider that needs no login", agents.Codex, codexIn, nil, true},
		{"codex without auth.json", agents.Codex, codexIn, func() {
			// A provider that needs a key: the CLI is asked.
			p := filepath.Join(codexHome, "config.toml")
			b, err := os.ReadFile(p)
			if err == nil {
				err = os.WriteFile(p, []byte(strings.Replace(string(b), "[model_providers.mock]\n", "[model_providers.mock]\nenv_key = \"RB_MOCK_KEY\"\n", 1)), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}, false},
		{"codex with a key in auth.json", agents.Codex, codexIn, func() {
			if err := os.WriteFile(filepath.Join(codexHome, "auth.json"), []byte(`{"OPENAI_API_KEY":"sk-test"}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup()
			}
			inv, err := agents.Prepare(agents.Request{Agent: c.agent, Role: agents.RolePlanner, Prompt: "x", Dir: root, Env: c.env})
			if err != nil {
				t.Fatal(err)
			}
			ls := agents.CheckLogin(context.Background(), c.agent, inv.Path, inv.Env)
			if !ls.Known || ls.LoggedIn != c.loggedIn || (ls.NoLogin != "") != strings.Contains(c.name, "needs no login") {
				t.Fatalf("%+v, want known and logged in = %v", ls, c.loggedIn)
			}
		})
	}
}
