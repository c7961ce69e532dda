package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// The whole trust cycle from the command line: an untrusted config is
// ignored with one line in the preview; `trust` records it (outside the
// repository) and the preview lists every argument it adds; a change
// untrusts it; --list and --json report; --revoke forgets it; a config
// with a refused argument cannot be trusted.
func TestTrustCommand(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	t.Setenv(agents.ClaudeBinEnv, filepath.Join(t.TempDir(), "no-claude")) // the preview, then "not installed"
	t.Setenv("GITHUB_TOKEN", "ghp_secret_value")
	dir := roomRepo(t)
	cfg := filepath.Join(dir, agents.ConfigName)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(extra ...string) string {
		t.Helper()
		_, out, _ := runCLI(t, "", append([]string{"plan", "--yes", "--path", dir, "add a flag"}, extra...)...)
		if !strings.Contains(out, "preview: /plan") {
			t.Fatalf("no preview:\n%s", out)
		}
		return out
	}
	write(`{"claude":{"args":["--model","opus","--effort","high"]}}`)

	out := plan()
	if !strings.Contains(out, "config:  .relay-baton.json ignored: not trusted (review it, then run relay-baton trust to use it)") || strings.Contains(out, "opus") {
		t.Fatalf("untrusted config:\n%s", out)
	}
	if !strings.Contains(out, "GITHUB_TOKEN") || strings.Contains(out, "ghp_secret_value") {
		t.Fatalf("the preview must name the held-back variable, never its value:\n%s", out)
	}

	before := snapshot(t, dir)
	code, out, errs := runCLI(t, "", "trust", "--path", dir)
	if code != 0 || !strings.Contains(out, "trusted: ") || !strings.Contains(out, `"--model" "opus" "--effort" "high"`) {
		t.Fatalf("trust: %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(cfgHome, "relay-baton", agents.TrustFileName)); err != nil {
		t.Fatalf("no trust record in the config folder: %v", err)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
		t.Fatalf("trust wrote into the repository: %v", d)
	}

	if _, out, _ := runCLI(t, "", "doctor", "--path", dir); !strings.Contains(out, ".relay-baton.json") || !strings.Contains(out, "trusted; adds claude --model opus --effort high") {
		t.Fatalf("doctor does not report the trusted config:\n%s", out)
	}
	out = plan("--allow-env", "GITHUB_TOKEN")
	if !strings.Contains(out, "config:  .relay-baton.json (trusted) adds 4 argument(s): --model opus --effort high") ||
		!strings.Contains(out, "--model opus --effort high -- <prompt") {
		t.Fatalf("trusted config not previewed:\n%s", out)
	}
	if !strings.Contains(out, "env PASSED (on purpose, audited): GITHUB_TOKEN") {
		t.Fatalf("--allow-env not previewed:\n%s", out)
	}
	// The user's own config adds more, and the preview says which
	// arguments come from where.
	ucfg := filepath.Join(cfgHome, "relay-baton", agents.UserConfigName)
	if err := os.WriteFile(ucfg, []byte(`{"claude":{"args":["--append-system-prompt","be brief"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out = plan()
	if !strings.Contains(out, "config:  .relay-baton.json (trusted) adds 4 argument(s): --model opus --effort high\n") ||
		!strings.Contains(out, "           your config "+ucfg+` adds 2 argument(s): --append-system-prompt "be brief"`+"\n") ||
		!strings.Contains(out, `--model opus --effort high --append-system-prompt "be brief" -- <prompt`) {
		t.Fatalf("the user's config not previewed:\n%s", out)
	}
	os.Remove(ucfg)

	write(`{"claude":{"args":["--model","opus","--effort","low"]}}`)
	if out := plan(); !strings.Contains(out, "config:  .relay-baton.json ignored: it changed since you trusted it") || strings.Contains(out, "--effort") {
		t.Fatalf("changed config:\n%s", out)
	}
	if _, out, _ := runCLI(t, "", "doctor", "--path", dir); !strings.Contains(out, "ignored: changed since you trusted it") {
		t.Fatalf("doctor does not report the changed config:\n%s", out)
	}
	code, out, _ = runCLI(t, "", "trust", "--list", "--json")
	var list struct {
		Record  string `json:"record"`
		Trusted []struct {
			Path  string `json:"path"`
			State string `json:"state"`
		} `json:"trusted"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list.Trusted) != 1 || list.Trusted[0].State != "changed" {
		t.Fatalf("trust --list --json: %d %v %s", code, err, out)
	}

	code, out, _ = runCLI(t, "", "trust", "--path", dir, "--revoke")
	if code != 0 || !strings.Contains(out, "revoked: ") {
		t.Fatalf("revoke: %d %s", code, out)
	}
	if code, out, _ = runCLI(t, "", "trust", "--list"); code != 0 || !strings.Contains(out, "no trusted config") {
		t.Fatalf("list after revoke: %d %s", code, out)
	}

	write(`{"claude":{"args":["--settings","{\"hooks\":{}}"]}}`)
	code, out, errs = runCLI(t, "", "trust", "--path", dir)
	if code != 1 || !strings.Contains(errs, "--settings") || !strings.Contains(errs, "not allowed") || !strings.Contains(errs, "may set only") || strings.Contains(out, "trusted:") {
		t.Fatalf("trust of a refused config: %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "plan", "--yes", "--path", dir, "--allow-env", "NOT A NAME", "x"); code != 2 || !strings.Contains(errs, "--allow-env takes a variable name") {
		t.Fatalf("bad --allow-env: %d %s", code, errs)
	}
}
