package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
)

// argvPreparer is a Preparer whose every invocation has argv.
type argvPreparer struct{ argv []string }

func (p argvPreparer) Prepare(req agents.Request) (agents.Invocation, error) {
	return agents.Invocation{Path: "/bin/" + req.Agent, Argv: append([]string{req.Agent}, p.argv...)}, nil
}

// doctor reads its lists from agents: every argument agents refuses as
// disabling permission checks or the sandbox fails doctor's arguments
// check, and every API-key variable agents holds back is reported. A
// second list in reports that drifted from agents' (it once had 4 of 7
// arguments) fails here.
func TestDoctorListsAreAgents(t *testing.T) {
	forbidden := agents.Forbidden()
	if len(forbidden) < 7 {
		t.Fatalf("agents.Forbidden() = %q", forbidden)
	}
	for _, fa := range forbidden {
		arg := fa
		if !strings.HasPrefix(fa, "--") {
			arg = "--mode=" + fa // a value: caught inside an argument
		}
		c := argumentsCheck(Facts{Agents: argvPreparer{[]string{"-p", arg, "--", "doctor"}}}, agents.Codex)
		if c.Status != Fail || !strings.Contains(c.Detail, arg) {
			t.Errorf("%s: doctor says %+v", arg, c)
		}
	}
	if c := argumentsCheck(Facts{Agents: argvPreparer{[]string{"-p", "--", "doctor"}}}, agents.Claude); c.Status != OK {
		t.Errorf("clean argv: %+v", c)
	}
	for _, k := range agents.KeyVars {
		env := map[string]string{k: "x"}
		c := apiKeyCheck(func(n string) string { return env[n] }, false, nil)
		if !strings.Contains(c.Detail, "blocked from agents: "+k) {
			t.Errorf("%s: doctor says %+v", k, c)
		}
	}
	var own []string
	for _, a := range []string{agents.Claude, agents.Codex} {
		own = append(own, agents.OwnKeyVars[a]...)
	}
	if strings.Join(own, ",") != strings.Join(agents.KeyVars, ",") {
		t.Errorf("agents.KeyVars %q is not agents.OwnKeyVars %q", agents.KeyVars, own)
	}
}

// doctor names the user's own config and what it adds, or why it stops
// every run.
func TestDoctorUserConfig(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if c := userConfigCheck(); c.Status != OK || !strings.HasPrefix(c.Detail, "none (") {
		t.Fatalf("no config: %+v", c)
	}
	p, err := agents.UserConfigPath()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(`{"claude":{"args":["--append-system-prompt","be brief"]}}`), 0o600)
	if c := userConfigCheck(); c.Status != OK || c.Detail != p+" adds claude --append-system-prompt be brief" {
		t.Fatalf("config: %+v", c)
	}
	os.WriteFile(p, []byte(`{"codex":{"args":["--yolo"]}}`), 0o600)
	if c := userConfigCheck(); c.Status != Fail || !strings.Contains(c.Detail, "--yolo") {
		t.Fatalf("refused: %+v", c)
	}
}
