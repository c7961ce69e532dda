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

	"github.com/relay-baton/relay-baton/events"
)

// ConfigName is the repository config file, at the repository root:
//
//	{"claude":{"args":[...]},"codex":{"args":[...]},"timeout":"45m"}
//
// Every field is optional; a missing file is an empty config.
const ConfigName = ".relay-baton.json"

// maxConfigBytes caps the config file: it is a few lines.
const maxConfigBytes = 1 << 20

// Config is the repository's agent configuration.
type Config struct {
	Claude  AgentConfig   // extra claude arguments
	Codex   AgentConfig   // extra codex arguments
	Timeout time.Duration // default per-run timeout; 0 = DefaultTimeout
	Path    string        // the file it was read from ("" when there is none)
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
	Claude  *AgentConfig `json:"claude"`
	Codex   *AgentConfig `json:"codex"`
	Timeout string       `json:"timeout"`
}

// LoadConfig reads root/.relay-baton.json. A missing file is not an error
// (the zero Config); a malformed one, an unknown field, a bad timeout or a
// forbidden argument is, with a message that names the file and the fix.
func LoadConfig(root string) (Config, error) {
	p := filepath.Join(root, ConfigName)
	// A repository may commit the file as a link (followed), but a FIFO
	// there must not hang every command: only a regular file is read.
	b, err := events.ReadRegular(p, maxConfigBytes)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if errors.Is(err, events.ErrTooBig) {
		return Config{}, fmt.Errorf("%s is over %d bytes: it should be a few lines of JSON", p, maxConfigBytes)
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", ConfigName, err)
	}
	return parseConfig(p, b)
}

func parseConfig(p string, b []byte) (Config, error) {
	const shape = `{"claude":{"args":[...]},"codex":{"args":[...]},"timeout":"45m"}`
	var cf configFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return Config{}, fmt.Errorf("%s: %v (expected %s)", p, err, shape)
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
	for _, agent := range []string{Claude, Codex} {
		args := c.Args(agent)
		if bad := ForbiddenArgs(args); len(bad) > 0 {
			return Config{}, fmt.Errorf("%s: %s.args has %s: relay-baton never disables the agent's permission checks or sandbox; remove it", p, agent, strings.Join(bad, ", "))
		}
		if own := policyArgs(agent, args); len(own) > 0 {
			return Config{}, fmt.Errorf("%s: %s.args sets %s, which relay-baton sets per role (read-only for planner/reviewer/ask, edits for executor); remove it", p, agent, strings.Join(own, ", "))
		}
	}
	return c, nil
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
