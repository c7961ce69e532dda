package agents

import (
	"os"
	"path/filepath"
	"testing"
)

// A codex configured with a model provider that needs no login (no
// env_key, no auth) is not "not logged in": there is nothing to log in to.
func TestCodexNoLoginProvider(t *testing.T) {
	cases := []struct {
		name, toml, want string
	}{
		{"mock table", "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"responses\"\n\n[features]\nplugins = false\n", "mock"},
		{"inline table", "model_provider = \"local\"\nmodel_providers.local = { name = \"L\", base_url = \"http://x\" }\n", "local"},
		{"providers table", "model_provider = \"local\"\n[model_providers]\nlocal = { name = \"L\", base_url = \"http://x\" }\n", "local"},
		{"built-in local", "model_provider = \"ollama\"\n", "ollama"},
		{"env_key", "model_provider = \"az\"\n[model_providers.az]\nname = \"Azure\"\nenv_key = \"AZURE_OPENAI_API_KEY\"\n", ""},
		{"inline env_key", "model_provider = \"az\"\nmodel_providers.az = { name = \"Azure\", env_key = \"K\" }\n", ""},
		{"auth sub-table", "model_provider = \"corp\"\n[model_providers.corp]\nname = \"Corp\"\n[model_providers.corp.auth]\ncommand = \"get-token\"\n", ""},
		{"openai auth", "model_provider = \"proxy\"\n[model_providers.proxy]\nrequires_openai_auth = true\n", ""},
		{"default provider", "model = \"gpt-5.5\"\n", ""},
		{"openai", "model_provider = \"openai\"\n", ""},
		{"unknown built-in", "model_provider = \"somewhere\"\n", ""},
	}
	for _, c := range cases {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(c.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := CodexNoLoginProvider([]string{"CODEX_HOME=" + home})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: provider %q %v, want %q", c.name, got, ok, c.want)
		}
		ls := CheckLogin(t.Context(), Codex, "/nonexistent/codex", []string{"CODEX_HOME=" + home})
		if (ls.NoLogin != "") != (c.want != "") || c.want != "" && !ls.LoggedIn {
			t.Errorf("%s: CheckLogin %+v", c.name, ls)
		}
	}
	if _, ok := CodexNoLoginProvider([]string{"CODEX_HOME=" + t.TempDir()}); ok {
		t.Error("no config.toml: a provider that needs no login")
	}
}
