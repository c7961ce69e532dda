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

// codexEnvKeyEnv is CodexEnv with the mock provider reading its key from
// X_API_KEY (env_key), as Azure or OpenRouter set-ups do.
func codexEnvKeyEnv(t *testing.T, o *agenttest.OpenAI) []string {
	t.Helper()
	env := agenttest.CodexEnv(t, o, agenttest.CodexBin(t))
	home, _ := agenttest.EnvValue(env, "CODEX_HOME")
	p := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(p)
	if err == nil {
		err = os.WriteFile(p, []byte(strings.Replace(string(b), "[model_providers.mock]\n", "[model_providers.mock]\nenv_key = \"X_API_KEY\"\n", 1)), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// With the real codex: a provider whose env_key relay-baton holds back
// fails with the variable named once, and the run's error names
// --allow-env and allowEnv; passed with AllowEnv, the run works.
func TestCodexProviderKeyE2E(t *testing.T) {
	root := agenttest.GitRepo(t, nil)
	o := agenttest.NewOpenAI(t, agenttest.Reply(agenttest.Text("done")))
	env := append(codexEnvKeyEnv(t, o), "X_API_KEY=sk-test")
	req := agents.Request{Agent: agents.Codex, Role: agents.RoleExecutor, Prompt: "hi", Dir: root, SessionDir: filepath.Join(root, ".ai-session"), Env: env}

	inv, err := agents.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := agents.CodexProviderKeyOf(inv); !ok || k != (agents.ProviderKey{Provider: "mock", Name: "X_API_KEY", Set: true}) {
		t.Fatalf("provider key %+v %v", k, ok)
	}
	var errorsShown []string
	req.OnActivity = func(a events.Activity) {
		if a.Kind == events.ActError {
			errorsShown = append(errorsShown, a.Text)
		}
	}
	res := agents.Run(context.Background(), req)
	var me *agents.MissingEnvError
	if !errors.As(res.Err, &me) || me.Name != "X_API_KEY" || !me.Held {
		t.Fatalf("run error %v (%T)", res.Err, res.Err)
	}
	for _, want := range []string{"--allow-env X_API_KEY", `"allowEnv": ["X_API_KEY"]`, "/allow-env X_API_KEY"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("the summary does not name %s: %s", want, res.Summary)
		}
	}
	if len(errorsShown) != 1 || !strings.Contains(errorsShown[0], "Missing environment variable: `X_API_KEY`") {
		t.Fatalf("codex's refusal shown %d times: %q", len(errorsShown), errorsShown)
	}

	// Not set at all: said so.
	req.Env = codexEnvKeyEnv(t, o)
	os.Unsetenv("X_API_KEY")
	if res := agents.Run(context.Background(), req); !errors.As(res.Err, &me) || me.Held || !strings.Contains(res.Summary, "which is not set") {
		t.Fatalf("unset key: %v", res.Err)
	}

	// Passed on purpose: the run works.
	req.Env, req.AllowEnv, req.OnActivity = env, []string{"X_API_KEY"}, nil
	inv, _ = agents.Prepare(req)
	if k, _ := agents.CodexProviderKeyOf(inv); !k.Passed {
		t.Fatalf("passed key %+v", k)
	}
	if res := agents.Run(context.Background(), req); res.Err != nil || res.FinalText != "done" {
		t.Fatalf("with --allow-env: %+v", res)
	}
}
