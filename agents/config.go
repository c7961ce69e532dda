package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relay-baton/relay-baton/safeio"
)

// ConfigName is the repository config file, at the repository root:
//
//	{"claude":{"args":["--model","opus","--effort","high"]},
//	 "codex":{"args":["-m","gpt-5","-c","model_reasoning_effort=high"]},
//	 "timeout":"45m","allowEnv":["AWS_PROFILE"]}
//
// Every field is optional; a missing file is an empty config. The args
// may hold only the flags of AllowedFlags (allow.go).
const ConfigName = ".relay-baton.json"

// maxConfigBytes caps the config file: it is a few lines.
const maxConfigBytes = 1 << 20

// Config is the repository's agent configuration.
type Config struct {
	Claude   AgentConfig   // extra claude arguments
	Codex    AgentConfig   // extra codex arguments
	Timeout  time.Duration // default per-run timeout; 0 = DefaultTimeout
	AllowEnv []string      // credential-like variables passed to agents on purpose
	Path     string        // the file it was read from ("" when there is none or it is ignored)
	// Ignored is one line saying why a config file present was not used
	// (not trusted, changed since trusted) and how to use it; "" otherwise.
	Ignored string
}

// AgentConfig is one agent's part of the config.
type AgentConfig struct {
	Args []string `json:"args"`
}

// Args returns the configured extra arguments of agent.
func (c Config) Args(agent string) []string {
	switch agent {
	case Claude:
		return c.Claude.Args
	case Codex:
		return c.Codex.Args
	}
	return nil
}

type configFile struct {
	Claude   *AgentConfig `json:"claude"`
	Codex    *AgentConfig `json:"codex"`
	Timeout  string       `json:"timeout"`
	AllowEnv []string     `json:"allowEnv"`
}

// LoadConfig returns root/.relay-baton.json when the user has trusted it
// (TrustConfig, `relay-baton trust`). A missing file is not an error (the
// zero Config). A file present but not trusted, or changed since it was
// trusted, is not read further: the zero Config with Ignored saying so.
// A trusted file that is malformed, or holds an unknown field, a bad
// timeout or a refused argument, is an error that names the file and the
// fix.
func LoadConfig(root string) (Config, error) {
	st, b, err := CheckTrust(root)
	if err != nil && !st.Exists {
		return Config{}, err
	}
	switch {
	case !st.Exists:
		return Config{}, nil
	case err != nil:
		return Config{Ignored: fmt.Sprintf("%s ignored: the trust record cannot be read (%v)", ConfigName, err)}, nil
	case st.Changed:
		return Config{Ignored: fmt.Sprintf("%s ignored: it changed since you trusted it (review it, then run relay-baton trust)", ConfigName)}, nil
	case !st.Trusted:
		return Config{Ignored: fmt.Sprintf("%s ignored: not trusted (review it, then run relay-baton trust to use it)", ConfigName)}, nil
	}
	return parseConfig(st.Path, b)
}

// ReadConfigFile reads a config file. A repository may commit it as a
// link (followed), but a FIFO there must not hang every command: only a
// regular file is read, at most 1 MiB.
func ReadConfigFile(p string) ([]byte, error) {
	b, err := safeio.ReadRegular(p, maxConfigBytes)
	if errors.Is(err, safeio.ErrTooBig) {
		return nil, fmt.Errorf("%s is over %d bytes: it should be a few lines of JSON", p, maxConfigBytes)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", ConfigName, err)
	}
	return b, err
}

// ReadConfig parses root/.relay-baton.json whether or not it is trusted
// (what `relay-baton trust` shows before recording it). A missing file is
// the zero Config.
func ReadConfig(root string) (Config, error) {
	p, err := ConfigPath(root)
	if err != nil {
		return Config{}, err
	}
	b, err := ReadConfigFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	return parseConfig(p, b)
}

func parseConfig(p string, b []byte) (Config, error) {
	const shape = `{"claude":{"args":["--model","opus"]},"codex":{"args":["-m","gpt-5"]},"timeout":"45m","allowEnv":["NAME"]}`
	var cf configFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return Config{}, fmt.Errorf("%s: %w (expected %s)", p, err, shape)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("%s: trailing data after the JSON object (expected %s)", p, shape)
	}
	c := Config{Path: p}
	if cf.Claude != nil {
		c.Claude = *cf.Claude
	}
	if cf.Codex != nil {
		c.Codex = *cf.Codex
	}
	if cf.Timeout != "" {
		d, err := time.ParseDuration(cf.Timeout)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s: timeout %q is not a positive duration (write e.g. \"45m\" or \"2h\")", p, cf.Timeout)
		}
		c.Timeout = d
	}
	for _, name := range cf.AllowEnv {
		if !ValidEnvName(name) {
			return Config{}, fmt.Errorf("%s: allowEnv has %q, not a variable name (write e.g. [\"AWS_PROFILE\"])", p, name)
		}
	}
	c.AllowEnv = cf.AllowEnv
	for _, agent := range []string{Claude, Codex} {
		if bad := NotAllowedArgs(agent, c.Args(agent)); len(bad) > 0 {
			return Config{}, fmt.Errorf("%s: %s.args: %s: a repository's config may set only %s (put other arguments in your own %s)",
				p, agent, JoinRefused(bad), AllowedSummary(), userConfigHint())
		}
	}
	return c, nil
}

// UserConfigName is the user's own agent config, in TrustDir (the user's
// config folder, which no repository writes):
//
//	{"claude":{"args":[...]},"codex":{"args":[...]}}
//
// Its arguments are added after the repository's, to every run of that
// agent, and shown in every preview with where they come from. They may be
// anything a repository's config may not, except what disables the
// agent's permission checks or sandbox, what relay-baton sets per role or
// per run, and the other arguments RefusedArgs lists.
const UserConfigName = "config.json"

// UserConfig is the user's own config.
type UserConfig struct {
	Claude AgentConfig `json:"claude"`
	Codex  AgentConfig `json:"codex"`
	Path   string      `json:"-"` // the file read ("" when there is none)
}

// Args returns the user's extra arguments for agent.
func (u UserConfig) Args(agent string) []string {
	switch agent {
	case Claude:
		return u.Claude.Args
	case Codex:
		return u.Codex.Args
	}
	return nil
}

// UserConfigPath is the user's own config's path.
func UserConfigPath() (string, error) {
	d, err := TrustDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, UserConfigName), nil
}

// userConfigHint names the user's config for messages.
func userConfigHint() string {
	if p, err := UserConfigPath(); err == nil {
		return p
	}
	return "relay-baton/" + UserConfigName + " in your config folder"
}

// LoadUserConfig reads the user's own config (UserConfigPath). A missing
// file is the zero UserConfig; a malformed file, one that is not a regular
// file (a link to one is followed: dotfile managers link) or a refused
// argument is an error that names the file.
func LoadUserConfig() (UserConfig, error) {
	p, err := UserConfigPath()
	if err != nil {
		return UserConfig{}, nil // no config folder: no user config
	}
	b, err := safeio.ReadRegular(p, maxConfigBytes)
	if errors.Is(err, os.ErrNotExist) {
		return UserConfig{}, nil
	}
	if err != nil {
		return UserConfig{}, fmt.Errorf("your config %s: %w", p, err)
	}
	var u UserConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return UserConfig{}, fmt.Errorf("your config %s: %w (expected {\"claude\":{\"args\":[...]},\"codex\":{\"args\":[...]}})", p, err)
	}
	u.Path = p
	for _, agent := range []string{Claude, Codex} {
		if err := checkUserArgs(agent, u.Args(agent)); err != nil {
			return UserConfig{}, fmt.Errorf("your config %s: %s.args %w; remove it", p, agent, err)
		}
	}
	return u, nil
}

// checkUserArgs refuses, in the user's own arguments, what disables the
// agent's permission checks or sandbox, what relay-baton sets per role,
// and what RefusedArgs lists.
func checkUserArgs(agent string, args []string) error {
	if bad := ForbiddenArgs(args); len(bad) > 0 {
		return fmt.Errorf("has %s: relay-baton never disables the agent's permission checks or sandbox", strings.Join(bad, ", "))
	}
	if own := policyArgs(agent, args); len(own) > 0 {
		return fmt.Errorf("sets %s, which relay-baton sets per role (read-only for planner/reviewer/ask, edits for executor)", strings.Join(own, ", "))
	}
	if bad := RefusedArgs(agent, args); len(bad) > 0 {
		return fmt.Errorf("refused: %s", JoinRefused(bad))
	}
	return nil
}

// ValidEnvName reports whether s is a portable environment variable name.
func ValidEnvName(s string) bool {
	if s == "" || len(s) > 256 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// forbidden are arguments that switch off an agent's permission checks or
// sandbox. They are refused wherever they appear.
var forbidden = []string{
	"--full-auto",
	"--dangerously-bypass-approvals-and-sandbox",
	"--dangerously-skip-permissions",
	"--allow-dangerously-skip-permissions",
	"--yolo",
	"bypassPermissions",
	"danger-full-access",
}

// Forbidden returns the arguments and values that disable an agent's
// permission checks or sandbox, refused wherever they appear (doctor
// checks every role's argv against this very list).
func Forbidden() []string { return append([]string(nil), forbidden...) }

// ForbiddenArgs returns the arguments of argv that disable an agent's
// permission checks or sandbox (--full-auto,
// --dangerously-bypass-approvals-and-sandbox, --dangerously-skip-permissions,
// bypassPermissions, danger-full-access, ...), in order; nil when there are
// none. A flag is also caught in its --flag=value form and inside a -c
// override (e.g. sandbox_mode="danger-full-access").
func ForbiddenArgs(argv []string) []string {
	var out []string
	for _, a := range argv {
		name, _, _ := strings.Cut(a, "=")
		for _, f := range forbidden {
			if strings.HasPrefix(f, "--") {
				if name == f {
					out = append(out, a)
					break
				}
			} else if strings.Contains(a, f) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// policyArgs returns the arguments that would override the per-role policy.
func policyArgs(agent string, argv []string) []string {
	var own []string
	switch agent {
	case Claude:
		own = []string{"--permission-mode"}
	case Codex:
		own = []string{"--sandbox", "-s"}
	}
	var out []string
	for _, a := range argv {
		name, _, _ := strings.Cut(a, "=")
		for _, o := range own {
			if name == o {
				out = append(out, a)
			}
		}
	}
	return out
}
