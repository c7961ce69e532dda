package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/relay-baton/relay-baton/safeio"
)

// In print mode (-p) Claude Code skips its workspace trust dialog, so a
// cloned repository's .claude/settings.json (hooks that run commands,
// permissions) and .mcp.json servers would take effect in relay-baton's own
// claude runs. relay-baton lets them load only in a folder Claude Code
// itself trusts: one where the user ran claude and accepted the dialog,
// recorded in the user's Claude config. Otherwise the run gets
// ClaudeUntrustedArgs.

// ClaudeUntrustedArgs keep a folder's project and local Claude Code
// settings, and its .mcp.json servers, out of a run: only the user's own
// settings (and managed policy) load.
var ClaudeUntrustedArgs = []string{"--setting-sources", "user", "--strict-mcp-config"}

// maxClaudeConfigBytes caps the read of the user's Claude config
// (~/.claude.json keeps per-project state and grows with use).
const maxClaudeConfigBytes = 64 << 20

// ClaudeTrust says whether Claude Code trusts a folder.
type ClaudeTrust struct {
	Trusted bool   `json:"trusted"`
	Config  string `json:"config"`           // the Claude config read
	Folder  string `json:"folder,omitempty"` // the projects entry that trusts it
	// Why is the reason it is not trusted (missing config, unreadable, no
	// entry); "" when trusted.
	Why string `json:"why,omitempty"`
	// Unreadable: the config is there but could not be used (a FIFO or a
	// folder in its place, malformed, too big).
	Unreadable bool `json:"unreadable,omitempty"`
}

// ClaudeConfigPath is the user's Claude Code config as claude finds it in
// env: $CLAUDE_CONFIG_DIR/.claude.json, else the home folder's .claude.json.
func ClaudeConfigPath(env []string) (string, error) {
	if d := lookupEnv(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json"), nil
	}
	// claude's home folder is Node's os.homedir(): %USERPROFILE% on
	// Windows, $HOME elsewhere.
	first, second := "HOME", "USERPROFILE"
	if runtime.GOOS == "windows" {
		first, second = second, first
	}
	home := lookupEnv(env, first)
	if home == "" {
		home = lookupEnv(env, second)
	}
	if home == "" {
		return "", errors.New("neither CLAUDE_CONFIG_DIR nor HOME is set")
	}
	return filepath.Join(home, ".claude.json"), nil
}

// CheckClaudeTrust reports whether Claude Code, run with env in dir, trusts
// dir, the way claude 2.1.328 decides it: the config's
// projects["<folder>"].hasTrustDialogAccepted is true for dir (links
// resolved) or for a folder above it, up to the git repository's top
// folder when dir is in one (a folder above the repository does not
// count), up to the root otherwise. Anything that cannot be read (no
// config, a FIFO or a folder in its place, malformed JSON, over 64 MiB)
// is "not trusted": the safe answer, with the reason in Why.
func CheckClaudeTrust(dir string, env []string) ClaudeTrust {
	var ct ClaudeTrust
	p, err := ClaudeConfigPath(env)
	if err != nil {
		ct.Why = err.Error()
		return ct
	}
	ct.Config = p
	b, err := safeio.ReadRegular(p, maxClaudeConfigBytes) // no FIFO blocks, size bound
	if errors.Is(err, fs.ErrNotExist) {
		ct.Why = p + " does not exist"
		return ct
	}
	if err != nil {
		ct.Why, ct.Unreadable = err.Error(), true
		return ct
	}
	var cfg struct {
		Projects map[string]struct {
			HasTrustDialogAccepted *bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		ct.Why, ct.Unreadable = fmt.Sprintf("%s is not valid JSON (%v)", p, err), true
		return ct
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		ct.Why = err.Error()
		return ct
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	top := gitTop(abs)
	for d := abs; ; {
		if e, ok := cfg.Projects[filepath.ToSlash(d)]; ok && e.HasTrustDialogAccepted != nil && *e.HasTrustDialogAccepted {
			ct.Trusted, ct.Folder = true, d
			return ct
		}
		parent := filepath.Dir(d)
		if d == top || parent == d {
			break
		}
		d = parent
	}
	ct.Why = "no trusted entry for " + abs + " in " + p
	return ct
}

// gitTop is the top folder of the git repository holding dir (the nearest
// folder with a .git entry), or "" when there is none.
func gitTop(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// ClaudeSettingsLine is the preview's and doctor's line about a folder's
// Claude Code project settings.
func ClaudeSettingsLine(ct ClaudeTrust) string {
	if ct.Trusted {
		return "loaded (Claude Code trusts " + ct.Folder + ")"
	}
	return "not loaded (Claude Code has not trusted this folder: run claude here once and accept, then they load)"
}
