package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents/agenttest"
)

// A codex whose config.toml selects a model provider that needs no login
// (no env_key, no auth) passes doctor's login check, naming the provider.
func TestDoctorCodexProviderNeedsNoLogin(t *testing.T) {
	codex := agenttest.CodexBin(t)
	home := t.TempDir()
	codexHome := filepath.Join(home, "codex-home")
	os.MkdirAll(codexHome, 0o700)
	toml := "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", codexHome)
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("RELAY_BATON_CODEX", codex)
	for _, k := range []string{"OPENAI_API_KEY", "CODEX_API_KEY"} {
		t.Setenv(k, "")
	}
	_, out, _ := runCLI(t, "", "doctor", "--path", roomRepo(t))
	if want := "ok   codex login            no login needed (provider mock)"; !strings.Contains(out, want) {
		t.Errorf("no %q in\n%s", want, out)
	}
	if strings.Contains(out, "fail codex login") {
		t.Errorf("codex login fails:\n%s", out)
	}
}
