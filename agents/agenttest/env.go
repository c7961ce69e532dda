package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/mockapi"
)

// ToolsDir is where .ci/run installs the pinned agent CLIs:
// $RELAY_BATON_TOOLS, default ~/.cache/relay-baton/npm.
func ToolsDir() string {
	if d := os.Getenv("RELAY_BATON_TOOLS"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "relay-baton", "npm")
	}
	return filepath.Join(home, ".cache", "relay-baton", "npm")
}

// BinDirEnv names a folder holding the claude and codex executables the
// end-to-end tests run instead of the pinned ones: set it to check other
// versions (an upgrade installed anywhere, say with npm install -g) without
// touching .ci/agent-clis.txt. A CLI missing from that folder is not looked
// for elsewhere.
const BinDirEnv = "RELAY_BATON_AGENT_BIN_DIR"

// FindBin returns the CLI the end-to-end tests run: name in
// $RELAY_BATON_AGENT_BIN_DIR when that is set (and nowhere else), else in
// ToolsDir()/node_modules/.bin, then on PATH. It returns "" when none has it.
func FindBin(name string) string {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return executable(filepath.Join(dir, name))
	}
	if p := executable(filepath.Join(ToolsDir(), "node_modules", ".bin", name)); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// executable returns p when it is an executable file, else "".
func executable(p string) string {
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// ClaudeBin returns the path of the claude CLI. When it is missing the test
// fails if CI=true and is skipped otherwise.
func ClaudeBin(t testing.TB) string { t.Helper(); return needBin(t, "claude") }

// CodexBin returns the path of the codex CLI, like ClaudeBin.
func CodexBin(t testing.TB) string { t.Helper(); return needBin(t, "codex") }

func needBin(t testing.TB, name string) string {
	t.Helper()
	if p := FindBin(name); p != "" {
		return p
	}
	msg := fmt.Sprintf("%s CLI not found in %s/node_modules/.bin nor on PATH (run bash .ci/run to install the pinned CLIs)", name, ToolsDir())
	if dir := os.Getenv(BinDirEnv); dir != "" {
		msg = fmt.Sprintf("%s CLI not found in %s=%s (put an executable %s there, or unset it to test the pinned CLIs)", name, BinDirEnv, dir, name)
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// ClaudeEnv builds an offline environment for claude against a: a
// temporary HOME whose ~/.claude/settings.json has
// {"apiKeyHelper":"echo sk-test"} (so no API-key variable is needed and
// relay-baton's key stripping can stay on), ANTHROPIC_BASE_URL=a.URL,
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, RELAY_BATON_NO_SOCKET=1 (the
// hook lanes deliver) and RELAY_BATON_CLAUDE=bin (left out when bin is "").
// It returns KEY=VALUE entries meant to be laid over os.Environ() (for
// agents.Request.Env, or a relay-baton child process's cmd.Env).
func ClaudeEnv(t testing.TB, a *Anthropic, bin string) []string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"apiKeyHelper":"echo sk-test"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + a.URL,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		// The session's messaging socket stays on with the variable above
		// (measured with claude 2.1.328): relay-baton's hooks record none,
		// so the Stop hook and rewake lanes deliver. Socket-lane tests
		// drop both.
		"RELAY_BATON_NO_SOCKET=1",
	}
	if bin != "" {
		env = append(env, "RELAY_BATON_CLAUDE="+bin)
	}
	return env
}

// CodexModel is the model name the mock provider is configured with.
const CodexModel = "gpt-5.5"

// CodexArgs are the extra codex arguments that point it at the mock
// provider o (-c model_provider=mock and its model_providers table), for
// a codex started directly. A repository's .relay-baton.json may not
// carry them (model_providers and features are refused there): CodexEnv
// writes the same settings into config.toml.
func CodexArgs(o *OpenAI) []string {
	return []string{
		"-m", CodexModel,
		"-c", "model_provider=mock",
		"-c", providerTOML(o),
		"-c", "features.plugins=false",
		"-c", "features.unbounded_connection_retries=false",
	}
}

func providerTOML(o *OpenAI) string {
	return fmt.Sprintf(`model_providers.mock={name="Mock",base_url=%q,wire_api="responses",request_max_retries=0,stream_max_retries=0}`, o.URL)
}

// CodexEnv builds an offline environment for codex against o: a fresh
// CODEX_HOME whose config.toml selects the mock provider (model, base URL,
// no retries, plugins off; no env_key: the mock wants no key, and a
// variable such as MOCK_API_KEY is a credential relay-baton holds back
// from agents), and RELAY_BATON_CODEX=bin (left out when bin is "").
func CodexEnv(t testing.TB, o *OpenAI, bin string) []string {
	t.Helper()
	home := t.TempDir()
	toml := mockapi.CodexConfig(CodexModel, o.URL)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	// A private TMPDIR: codex's workspace-write sandbox treats TMPDIR as a
	// writable root and creates (then removes) a .git mount point in it; in
	// the shared /tmp that briefly makes every other test's temp folder look
	// like it is inside a git repository.
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"CODEX_HOME=" + home,
		"TMPDIR=" + tmp,
	}
	if bin != "" {
		env = append(env, "RELAY_BATON_CODEX="+bin)
	}
	return env
}

// OfflineEnv is the whole offline environment for a process that runs
// agents (a built relay-baton in a pty test, say): ClaudeEnv for a and
// CodexEnv for o (either may be nil), with RELAY_BATON_CLAUDE /
// RELAY_BATON_CODEX set to the binaries found by ClaudeBin / CodexBin (so
// the test skips, or fails under CI=true, when one is missing). Use it as
// cmd.Env = append(os.Environ(), OfflineEnv(t, a, o)...); exec keeps the
// last value of a repeated variable.
func OfflineEnv(t testing.TB, a *Anthropic, o *OpenAI) []string {
	t.Helper()
	var env []string
	if a != nil {
		env = append(env, ClaudeEnv(t, a, ClaudeBin(t))...)
	}
	if o != nil {
		env = append(env, CodexEnv(t, o, CodexBin(t))...)
	}
	return env
}

// RepoConfig is the shape of .relay-baton.json, for tests that write one.
type RepoConfig struct {
	ClaudeArgs []string
	CodexArgs  []string
	Timeout    string // e.g. "45m"; "" leaves it out
}

// WriteRepoConfig writes root/.relay-baton.json.
func WriteRepoConfig(t testing.TB, root string, c RepoConfig) {
	t.Helper()
	m := map[string]any{}
	if c.ClaudeArgs != nil {
		m["claude"] = map[string]any{"args": c.ClaudeArgs}
	}
	if c.CodexArgs != nil {
		m["codex"] = map[string]any{"args": c.CodexArgs}
	}
	if c.Timeout != "" {
		m["timeout"] = c.Timeout
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(root, ".relay-baton.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// GitRepo makes a temporary git work tree holding files (`git init`; a
// bare .git folder when git is not installed) and returns its root.
func GitRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Logf("git init: %v %s (making a bare .git folder)", err, out)
		if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Snapshot returns every regular file under root (except .git/ and
// .ai-session/) with its content, to prove a run changed nothing.
func Snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (rel == ".git" || rel == ".ai-session") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		} else if !d.IsDir() {
			out[filepath.ToSlash(rel)] = "<" + d.Type().String() + ">"
		} else if rel != "." {
			out[filepath.ToSlash(rel)+"/"] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// EnvValue returns the value of key in a KEY=VALUE list (the last wins).
func EnvValue(env []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if k, val, found := strings.Cut(kv, "="); found && k == key {
			v, ok = val, true
		}
	}
	return v, ok
}
