package agents_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/agents"
	"github.com/relay-baton/relay-baton/agents/agenttest"
	"github.com/relay-baton/relay-baton/internal/testkit"
)

// claudeHome is a temporary HOME whose ~/.claude.json is body ("" for
// none), and the environment that names it.
func claudeHome(t *testing.T, body string) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	if body != "" {
		if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
}

func trustedJSON(folders ...string) string {
	var parts []string
	for _, f := range folders {
		parts = append(parts, `"`+filepath.ToSlash(f)+`":{"hasTrustDialogAccepted":true}`)
	}
	return `{"hasCompletedOnboarding":true,"projects":{` + strings.Join(parts, ",") + `}}`
}

// realTemp is a temporary folder with the links in its path resolved (the
// key claude records).
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The trust decision follows claude 2.1.328's, checked against its trust
// dialog in tmux: the folder's resolved path or a folder above it, up to
// the git repository's top folder; anything unreadable is untrusted.
func TestCheckClaudeTrust(t *testing.T) {
	parent := realTemp(t)
	repo := filepath.Join(parent, "repo")
	sub := filepath.Join(repo, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(parent, "plain", "deep")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(realTemp(t), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, config, dir string
		want              bool
	}{
		{"no config", "", repo, false},
		{"malformed config", `{"projects":`, repo, false},
		{"no entry", trustedJSON(filepath.Join(parent, "other")), repo, false},
		{"accepted false", `{"projects":{"` + filepath.ToSlash(repo) + `":{"hasTrustDialogAccepted":false}}}`, repo, false},
		{"projects not an object", `{"projects":[1,2]}`, repo, false},
		{"the folder", trustedJSON(repo), repo, true},
		{"the repository's top from a sub folder", trustedJSON(repo), sub, true},
		{"a folder above the repository", trustedJSON(parent), repo, false},
		{"a folder above, outside git", trustedJSON(parent), plain, true},
		{"through a link, the real path recorded", trustedJSON(repo), link, true},
		{"through a link, the link recorded", trustedJSON(link), link, false},
		{"a sibling with a common prefix", trustedJSON(repo + "x"), repo, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, env := claudeHome(t, c.config)
			ct := agents.CheckClaudeTrust(c.dir, env)
			if ct.Trusted != c.want {
				t.Fatalf("trusted = %v, want %v (%+v)", ct.Trusted, c.want, ct)
			}
			if !ct.Trusted && ct.Why == "" {
				t.Fatalf("untrusted without a reason: %+v", ct)
			}
		})
	}
}

// A FIFO or a folder at ~/.claude.json is untrusted,
// never a hang, and says why.
func TestCheckClaudeTrustUnreadable(t *testing.T) {
	repo := agenttest.GitRepo(t, nil)
	for _, kind := range []string{"fifo", "folder"} {
		t.Run(kind, func(t *testing.T) {
			home, env := claudeHome(t, "")
			p := filepath.Join(home, ".claude.json")
			if kind == "fifo" {
				testkit.MakeFIFO(t, p)
			} else if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			ct := agenttest.Within(t, "trust check with a "+kind+" at ~/.claude.json", func() agents.ClaudeTrust {
				return agents.CheckClaudeTrust(repo, env)
			})
			if ct.Trusted || !ct.Unreadable || !strings.Contains(ct.Why, p) {
				t.Fatalf("%s at the config: %+v", kind, ct)
			}
		})
	}
}

// $CLAUDE_CONFIG_DIR moves the config, as it does for claude.
func TestCheckClaudeTrustConfigDir(t *testing.T) {
	repo, err := filepath.EvalSymlinks(agenttest.GitRepo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	home, _ := claudeHome(t, `{"projects":{}}`)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".claude.json"), []byte(trustedJSON(repo)), 0o600); err != nil {
		t.Fatal(err)
	}
	ct := agents.CheckClaudeTrust(repo, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + dir})
	if !ct.Trusted || ct.Config != filepath.Join(dir, ".claude.json") {
		t.Fatalf("CLAUDE_CONFIG_DIR: %+v", ct)
	}
	if ct := agents.CheckClaudeTrust(repo, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}); ct.Trusted {
		t.Fatalf("HOME's config trusts nothing: %+v", ct)
	}
}

// Untrusted, a claude run gets --setting-sources user --strict-mcp-config
// and the invocation says so; trusted, it runs as before. Codex is
// untouched.
func TestPrepareClaudeProjectSettings(t *testing.T) {
	repo, err := filepath.EvalSymlinks(agenttest.GitRepo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	home, env := claudeHome(t, "")
	req := agents.Request{Agent: agents.Claude, Role: agents.RolePlanner, Prompt: "plan", Dir: repo, Env: env}
	inv, _ := agents.Prepare(req)
	if !containsRun(inv.Argv, agents.ClaudeUntrustedArgs) || !strings.Contains(inv.ClaudeSettings, "not loaded") {
		t.Fatalf("untrusted folder: argv %q, line %q", inv.Argv, inv.ClaudeSettings)
	}
	if got := inv.Argv[len(inv.Argv)-2:]; got[0] != "--" || got[1] != "plan" {
		t.Fatalf("the prompt is no longer last after --: %q", inv.Argv)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(trustedJSON(repo)), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, _ = agents.Prepare(req)
	if slices.Contains(inv.Argv, "--setting-sources") || slices.Contains(inv.Argv, "--strict-mcp-config") ||
		!strings.Contains(inv.ClaudeSettings, "loaded (Claude Code trusts "+repo+")") {
		t.Fatalf("trusted folder: argv %q, line %q", inv.Argv, inv.ClaudeSettings)
	}
	req.Agent = agents.Codex
	inv, _ = agents.Prepare(req)
	if inv.ClaudeSettings != "" || slices.Contains(inv.Argv, "--setting-sources") {
		t.Fatalf("codex: argv %q, line %q", inv.Argv, inv.ClaudeSettings)
	}
}

// containsRun reports whether want appears in argv as consecutive items.
func containsRun(argv, want []string) bool {
	for i := 0; i+len(want) <= len(argv); i++ {
		if slices.Equal(argv[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
